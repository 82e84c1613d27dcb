// AutoBuild's gate: every node:test outcome as one JSON line, named by its file (relative to where the
// runner started) and its suite path, so a passing test has the same id in the base's run and a task's.
// Loaded through NODE_OPTIONS (--test-reporter) in the gate's own runs only.
import { relative } from 'node:path';

export default async function* autobuildReporter(source) {
  const stacks = new Map();
  for await (const event of source) {
    const data = event.data ?? {};
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
    yield JSON.stringify({ outcome, file, path, parent, reason }) + '\n';
  }
}
