// AutoBuild's gate: jest's results (testResultsProcessor, added by autobuild_js_preload.cjs) written as the
// same JSON document vitest's json reporter writes, into the gate's report folder; jest's results pass on.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

// On the gate's channel (taken by autobuild_js_preload.cjs in jest's parent process, where this runs; its workers
// have neither the channel nor its variable): a record per suite that failed to run and per test, then the end.
function send(testResults, results) {
  const channel = globalThis[Symbol.for('autobuild.gate.channel')];
  if (!channel || channel.runner !== 'jest') return;
  const session = channel.session || channel.open('jest');
  for (const file of testResults) {
    if (file.status === 'failed') session.test({ file: file.name, suite: 'failed' });
    for (const test of file.assertionResults) {
      session.test({ file: file.name, ancestorTitles: test.ancestorTitles, title: test.title, status: test.status });
    }
  }
  session.end(results.success ? 0 : 1);
}

module.exports = function autobuildJestResults(results) {
  const reports = process.env.AUTOBUILD_JS_REPORTS;
  if (!reports) return results;
  const testResults = (results.testResults || []).map((file) => ({
    name: file.testFilePath,
    status: file.testExecError ? 'failed' : 'passed', // a suite that failed to run (a syntax error, a bad import)
    message: file.testExecError ? String(file.failureMessage || file.testExecError.message || '').slice(0, 2000) : '',
    assertionResults: (file.testResults || []).map((test) => ({
      ancestorTitles: test.ancestorTitles,
      title: test.title,
      status: test.status,
      failureMessages: (test.failureMessages || []).map((message) => String(message).slice(0, 2000)),
    })),
  }));
  fs.writeFileSync(path.join(reports, `jest-${process.pid}.json`), JSON.stringify({ testResults }));
  send(testResults, results);
  return results;
};
