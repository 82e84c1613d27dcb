// AutoBuild's gate: every node:test outcome as one JSON line, named by its file (relative to where the
// runner started) and its suite path, so a passing test has the same id in the base's run and a task's.
// Loaded through NODE_OPTIONS (--test-reporter) in the gate's own runs only. The same lines go on the gate's
// channel as they happen (taken by autobuild_js_preload.cjs in this, the runner's parent process; the test files
// run in child processes that have neither the channel nor its variable), between an `open` and an `end`.
import { relative } from 'node:path';

export default async function* autobuildReporter(source) {
  const channel = globalThis[Symbol.for('autobuild.gate.channel')];
  const session = channel && channel.runner === 'node --test' ? channel.open('node --test') : undefined;
  const stacks = new Map();
  const altered = new Set(); // each changed function once, named by the first test file whose process found it
  let failed = false;
  for await (const event of source) {
    const data = event.data ?? {};
    // A test file's process that found node's assert changed says so in its output (autobuild_js_preload.cjs).
    const said = event.type === 'test:stdout' && session ? String(data.message ?? '').split('\n') : [];
    for (const line of said.filter((text) => text.startsWith(channel.mark))) {
      const where = data.file ? ` (in ${relative(process.cwd(), data.file)})` : '';
      try {
        const found = JSON.parse(line.slice(channel.mark.length)).filter(([name]) => !altered.has(name));
        found.forEach(([name]) => altered.add(name));
        if (found.length) session.altered(found.map(([name, now]) => [name, `${now}${where}`]));
      } catch {
        // not our line after all: the file's own output
      }
    }
    if (!['test:start', 'test:pass', 'test:fail'].includes(event.type)) continue;
    const file = data.file ? relative(process.cwd(), data.file) : '';
    // A file that declares no test is reported as one test named by its absolute path: the base's worktree and
    // a task's lie in different folders, so it is named by the file's relative path as every id is.
    const name = data.file && data.name === data.file ? file : data.name;
    const stack = stacks.get(file) ?? [];
    stacks.set(file, stack);
    if (event.type === 'test:start') {
      stack.length = data.nesting;
      if (data.nesting > 0 && stack[data.nesting - 1]) stack[data.nesting - 1].parent = true;
      stack.push({ name, parent: false });
      continue;
    }
    const own = stack[data.nesting];
    const parent = own !== undefined && own.name === name && own.parent;
    const skipped = data.skip !== undefined && data.skip !== false;
    const todo = data.todo !== undefined && data.todo !== false;
    const outcome = skipped ? 'skip' : todo ? 'todo' : event.type === 'test:pass' ? 'pass' : 'fail';
    const reason = typeof data.skip === 'string' ? data.skip : typeof data.todo === 'string' ? data.todo : '';
    const path = [...stack.slice(0, data.nesting).map((entry) => entry.name), name];
    if (outcome === 'fail' && data.details?.type !== 'suite') failed = true;
    if (session) { // what node's own summary counts it as: a suite is no test, a test its parent cancelled no failure
      const suite = data.details?.type === 'suite';
      const cancelled = data.details?.error?.failureType === 'cancelledByParent';
      session.test({ outcome, file, path, parent, reason, suite, cancelled });
    }
    yield JSON.stringify({ outcome, file, path, parent, reason }) + '\n';
  }
  if (session) session.end(failed || process.exitCode ? 1 : 0);
}
