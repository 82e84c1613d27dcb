// AutoBuild's gate: mocha's reporter in the gate's runs (added by autobuild_js_preload.cjs): mocha's own spec
// output as usual, plus every test's outcome by file and suite path on the gate's channel as it comes, and as the
// same JSON document vitest's json reporter writes, into the gate's report folder. mocha takes one reporter: this
// one wraps spec.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

function specOfThisRun() {
  // This run's own mocha (<mocha>/bin/mocha.js, or bin/_mocha before mocha 10): its spec reporter, CommonJS up
  // to mocha 11 and an ES module (`export { Spec }`, loaded by node's require of ES modules) from mocha 12 on.
  try {
    // (bin/mocha.js starts lib/cli/cli.js as its child when node flags are given: the package's root either way.)
    const main = fs.realpathSync(process.argv[1] || '');
    const at = main.lastIndexOf(`${path.sep}mocha${path.sep}`);
    const root = at === -1 ? path.dirname(path.dirname(main)) : main.slice(0, at + 'mocha'.length + 1);
    const spec = require(path.join(root, 'lib', 'reporters', 'spec.js'));
    return spec.Spec || spec.default || spec;
  } catch {
    return class Silent {};
  }
}

const Base = specOfThisRun();

class AutobuildReporter extends Base {
  constructor(runner, options) {
    super(runner, options);
    const files = new Map();
    // On the gate's channel as each outcome comes (taken by autobuild_js_preload.cjs in this process: mocha's
    // tests run here unless in parallel, where its workers report to this process).
    const channel = globalThis[Symbol.for('autobuild.gate.channel')];
    const session = channel && channel.runner === 'mocha' ? channel.open('mocha') : undefined;
    let failures = 0;
    const send = (test, status) => {
      const titles = test.titlePath();
      if (session) {
        session.test({ file: test.file || '', ancestorTitles: titles.slice(0, -1), title: titles[titles.length - 1],
          status });
      }
    };
    runner.on('pass', (test) => send(test, 'passed'));
    runner.on('pending', (test) => send(test, 'pending'));
    runner.on('fail', (test) => {
      failures += 1;
      if (test.type !== 'hook') send(test, 'failed');
      else if (session) session.test({ file: test.file || '', suite: 'failed', hook: test.fullTitle() });
    });
    runner.once('end', () => { if (session) session.end(failures ? 1 : 0); });
    const record = (test, status, message) => {
      const file = test.file || '';
      if (!files.has(file)) files.set(file, { name: file, status: 'passed', message: '', assertionResults: [] });
      const titles = test.titlePath();
      files.get(file).assertionResults.push({
        ancestorTitles: titles.slice(0, -1), title: titles[titles.length - 1], status,
        failureMessages: message ? [message] : [],
      });
    };
    runner.on('pass', (test) => record(test, 'passed'));
    runner.on('pending', (test) => record(test, 'pending'));
    runner.on('fail', (test, error) => {
      const message = String((error && error.message) || error);
      if (test.type === 'hook') { // a hook's failure: its suite's tests don't run
        const file = test.file || '';
        if (!files.has(file)) files.set(file, { name: file, status: 'failed', message, assertionResults: [] });
        files.get(file).status = 'failed';
        files.get(file).message = `${test.fullTitle()}: ${message}`;
        return;
      }
      record(test, 'failed', message);
    });
    runner.once('end', () => {
      const reports = process.env.AUTOBUILD_JS_REPORTS;
      if (!reports) return;
      const testResults = [...files.values()];
      fs.writeFileSync(path.join(reports, `mocha-${process.pid}.json`), JSON.stringify({ testResults }));
    });
  }
}

module.exports = AutobuildReporter;
