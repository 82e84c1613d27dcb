// AutoBuild's gate: adds its own reporter to a jest, vitest or mocha run it finds starting, so every test is
// named by its file and suite path, passes and skips included, without touching the user's command or config.
// Loaded through NODE_OPTIONS (--require) in the gate's own runs only; does nothing elsewhere, or when the
// runner is started by another program's API (craco, nx): those stay accounted by count.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const reports = process.env.AUTOBUILD_JS_REPORTS;

function started() {
  try {
    return fs.realpathSync(process.argv[1] || '').split(path.sep).join('/');
  } catch {
    return '';
  }
}

function ours(runner) {
  return path.join(reports, `${runner}-${process.pid}.json`);
}

// The overlay's restricted run (gate/overlay.py): only the base's versions of these test files, one a line.
const only = (process.env.AUTOBUILD_JS_ONLY || '').split('\n').filter(Boolean);

function added(main) {
  // react-scripts' test script hands its own arguments to jest.run: the same option reaches jest.
  if (/\/jest(-cli)?\/bin\/jest\.js$|\/react-scripts\/scripts\/test\.js$/.test(main)) {
    const paths = only.length ? ['--runTestsByPath', ...only] : [];
    return ['--testResultsProcessor', path.join(__dirname, 'autobuild_jest_results.cjs'), ...paths];
  }
  if (/\/vitest\/vitest\.mjs$/.test(main)) {
    return ['--reporter=default', '--reporter=json', `--outputFile.json=${ours('vitest')}`, ...only];
  }
  if (/\/mocha\/bin\/(mocha(\.js)?|_mocha)$/.test(main)) { // never restricted: its config's `spec` adds up
    return ['--reporter', path.join(__dirname, 'autobuild_mocha_reporter.cjs')];
  }
  return [];
}

// Once per run: mocha's bin may start `_mocha` again as its child, which inherits the arguments.
if (reports && !process.env.AUTOBUILD_JS_REPORTING) {
  const extra = added(started());
  if (extra.length) {
    process.env.AUTOBUILD_JS_REPORTING = '1';
    const end = process.argv.indexOf('--', 2); // after a bare `--` the runner takes words as file names
    process.argv.splice(end === -1 ? process.argv.length : end, 0, ...extra);
  }
}
