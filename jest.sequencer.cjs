// Longest suites first, so that with several jest workers the long ones (the chaos e2e above all)
// do not start last and leave the other workers idle. A suite's time is jest's own record of its
// last run when the cache has one, else the measured time in suite-times.json (a fresh clone has
// no cache), else its file size as jest does by default. Failed-last-time suites still go first.
// Loaded by jest without its transform, hence plain CommonJS.
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const measured = require('./test/setup/suite-times.json');

const ROOT = __dirname;

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const seconds = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached / 1000;
      const known = measured[path.relative(ROOT, test.path).split(path.sep).join('/')];
      return known ?? -1;
    };
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    const keyed = tests.map((test) => ({ test, failed: this.hasFailed(test), s: seconds(test) }));
    keyed.sort(
      (a, b) => Number(b.failed) - Number(a.failed) || b.s - a.s || size(b.test) - size(a.test),
    );
    return keyed.map((k) => k.test);
  }
}

module.exports = LongestFirstSequencer;
