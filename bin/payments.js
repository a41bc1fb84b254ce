#!/usr/bin/env node
// The operator CLI (apps/cli). In a checkout it runs the TypeScript source through tsx; in the
// container image (devDependencies pruned, `npm run build` done) it runs dist/apps/cli/src/main.js.
'use strict';
const { existsSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const source = path.join(root, 'apps', 'cli', 'src', 'main.ts');
const built = path.join(root, 'dist', 'apps', 'cli', 'src', 'main.js');

function hasTsx() {
  try {
    require.resolve('tsx/cjs/api', { paths: [root] });
    return true;
  } catch {
    return false;
  }
}

let cli;
if (existsSync(source) && hasTsx()) {
  const { require: tsxRequire } = require(require.resolve('tsx/cjs/api', { paths: [root] }));
  cli = tsxRequire(source, __filename);
} else if (existsSync(built)) {
  cli = require(built);
} else {
  process.stderr.write('payments: neither the source with tsx nor dist/ (run `npm run build`)\n');
  process.exit(1);
}
cli.main(process.argv.slice(2)).then((code) => process.exit(code));
