// AutoBuild's gate: jest's results (testResultsProcessor, added by autobuild_js_preload.cjs) written as the
// same JSON document vitest's json reporter writes, into the gate's report folder; jest's results pass on.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

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
  return results;
};
