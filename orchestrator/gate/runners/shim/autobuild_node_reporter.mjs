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
    const stack = stacks.get(file) ?? [];
    stacks.set(file, stack);
    if (event.type === 'test:start') {
      stack.length = data.nesting;
      if (data.nesting > 0 && stack[data.nesting - 1]) stack[data.nesting - 1].parent = true;
      stack.push({ name: data.name, parent: false });
      continue;
    }
    const own = stack[data.nesting];
    const parent = own !== undefined && own.name === data.name && own.parent;
    const skipped = data.skip !== undefined && data.skip !== false;
    const todo = data.todo !== undefined && data.todo !== false;
    const outcome = skipped ? 'skip' : todo ? 'todo' : event.type === 'test:pass' ? 'pass' : 'fail';
    const reason = typeof data.skip === 'string' ? data.skip : typeof data.todo === 'string' ? data.todo : '';
    const path = [...stack.slice(0, data.nesting).map((entry) => entry.name), data.name];
    yield JSON.stringify({ outcome, file, path, parent, reason }) + '\n';
  }
}
