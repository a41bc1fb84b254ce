#!/usr/bin/env bash
# Prints the Node.js runtime the project's commands run on and refuses anything older than the
# supported major. `npm ci` installs Node 24 LTS as the dev dependency `node`
# (node_modules/.bin/node), and npm scripts put node_modules/.bin first on PATH, so `npm test` and
# `npm run demo` run on it whatever Node launched npm. Run outside npm (a bare `npx jest` on an
# older system Node), this check says so instead of failing obscurely later.
set -euo pipefail
REQUIRED_MAJOR=24
node -e '
  const required = Number(process.argv[1]);
  const major = Number(process.versions.node.split(".")[0]);
  console.log(`[runtime] Node ${process.version} (${process.execPath})`);
  if (!(major >= required)) {
    console.error(
      `[runtime] ERROR: Node ${required}+ is required, this is ${process.version}. Run the command ` +
        "through npm (npm test, npm run <script>) after `npm ci`, which installs Node " +
        `${required} LTS into node_modules/.bin/node.`,
    );
    process.exit(1);
  }' "$REQUIRED_MAJOR"
