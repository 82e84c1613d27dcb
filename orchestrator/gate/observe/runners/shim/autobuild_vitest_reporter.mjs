// AutoBuild's gate: vitest's reporter on the gate's channel (added by autobuild_js_preload.cjs beside vitest's own
// reporters). It runs in vitest's main process, which took the channel before any project code loaded; the tests
// run in vitest's workers (forks: processes with neither the channel nor its variable; threads and a single-process
// pool share the main process, as an in-band jest does). A record per test as its result comes, named as vitest's
// json reporter names it (file, suite titles, title, status), one per test file that failed to run, then the end.
function channelSession() {
  const channel = globalThis[Symbol.for('autobuild.gate.channel')];
  if (!channel || channel.runner !== 'vitest') return undefined;
  channel.session = channel.session || channel.open('vitest');
  return channel.session;
}

function titles(test) {
  const found = [];
  for (let parent = test.parent; parent && parent.type === 'suite'; parent = parent.parent) found.unshift(parent.name);
  return found;
}

function status(test) {
  const result = test.result();
  if (result.state === 'skipped') return test.options && test.options.mode === 'todo' ? 'todo' : 'skipped';
  return result.state;
}

// vitest before 3 has no onTestCaseResult: its files' tasks at the end instead.
function* oldTasks(task, ancestors) {
  for (const child of task.tasks || []) {
    if (child.type === 'suite') yield* oldTasks(child, [...ancestors, child.name]);
    else yield { child, ancestors };
  }
}

export default class AutobuildVitestReporter {
  constructor() {
    this.session = channelSession();
    this.streamed = false;
  }

  onTestCaseResult(test) {
    if (!this.session) return;
    this.streamed = true;
    this.session.test({ file: test.module.moduleId, ancestorTitles: titles(test), title: test.name,
      status: status(test) });
  }

  onTestModuleEnd(module) {
    if (!this.session) return;
    this.streamed = true;
    const errors = typeof module.errors === 'function' ? module.errors() : [];
    if (module.state() === 'failed' && errors.length) this.session.test({ file: module.moduleId, suite: 'failed' });
  }

  onTestRunEnd(modules, unhandledErrors, reason) {
    if (!this.session || this.ended) return;
    this.ended = true;
    this.session.end(reason === 'passed' && !(unhandledErrors || []).length ? 0 : 1);
  }

  onFinished(files, errors) {
    if (!this.session || this.ended) return;
    for (const file of this.streamed ? [] : files || []) {
      const failedToRun = file.result && file.result.state === 'fail' && !(file.tasks || []).length;
      if (failedToRun) this.session.test({ file: file.filepath, suite: 'failed' });
      for (const { child, ancestors } of oldTasks(file, [])) {
        const state = (child.result && child.result.state) || (child.mode === 'todo' ? 'todo' : 'skipped');
        const named = { pass: 'passed', fail: 'failed', skip: 'skipped', todo: 'todo' }[state] || state;
        this.session.test({ file: file.filepath, ancestorTitles: ancestors, title: child.name, status: named });
      }
    }
    const failed = (errors || []).length || (files || []).some((file) => file.result && file.result.state === 'fail');
    this.ended = true;
    this.session.end(failed ? 1 : 0);
  }
}
