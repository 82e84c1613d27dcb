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
    return ['--reporter=default', '--reporter=json', `--outputFile.json=${ours('vitest')}`,
      `--reporter=${path.join(__dirname, 'autobuild_vitest_reporter.mjs')}`, ...only];
  }
  if (/\/mocha\/bin\/(mocha(\.js)?|_mocha)$/.test(main)) { // never restricted: its config's `spec` adds up
    return ['--reporter', path.join(__dirname, 'autobuild_mocha_reporter.cjs')];
  }
  return [];
}

// The gate's channel (gate/channel.py): taken by a runner's own process only (jest's and vitest's, whose tests run
// in their workers unless in band or in threads; a `node --test` run, whose test files run in processes of their
// own; mocha's, whose tests run in it unless in parallel: not npm, not a build script before them), the variable
// removed before any project code loads; node starts its children without the descriptor. Its reporters (this
// folder) write one JSON line per record.
const CHANNEL = 'AUTOBUILD_GATE_CHANNEL';
let sessions = 0;

// node's assert (the assertion library of node:test's and mocha's tests) as node gave it, taken before any project
// code loads, in a runner's process and in node:test's test-file processes: at the end, a function of it replaced
// (an assertion that can't fail) is reported as the gate's Python shims report unittest's (gate/observe/crosscheck.py).
const MARK = 'AUTOBUILD-GATE-ALTERED ';
const writeSync = fs.writeSync;
let original = []; // taken only where tests run (npm's and yarn's processes never load node:assert for it)

function takeAssert() {
  const assertion = require('node:assert');
  original = [['assert', assertion], ['assert.strict', assertion.strict]].flatMap(([owner, object]) =>
    Object.getOwnPropertyNames(object).map((name) => [owner, object, name, object[name]])
      .filter((entry) => typeof entry[3] === 'function'));
}

function shown(value) {
  try {
    return value === undefined ? 'removed' : String(value).replace(/\s+/g, ' ').slice(0, 100);
  } catch {
    return typeof value;
  }
}

// [`node:assert.strictEqual`, what is there now] for each function of node's assert no longer node's own.
function altered() {
  const found = [];
  for (const [owner, object, name, value] of original) {
    let now;
    try {
      const described = Reflect.getOwnPropertyDescriptor(object, name);
      now = described && ('value' in described ? described.value : described.get);
    } catch {
      now = undefined;
    }
    if (now !== value) found.push([`node:${owner}.${name}`, shown(now)]);
  }
  return found.slice(0, 50);
}

// node:test's test-file processes have no channel: what they found goes to the runner's process as a line of their
// output, which its reporter (autobuild_node_reporter.mjs) hears as the file's output and puts on the channel.
if (process.env.NODE_TEST_CONTEXT && !process.env[CHANNEL]) {
  takeAssert();
  process.on('exit', () => {
    const names = altered();
    if (names.length) {
      try {
        writeSync(1, `\n${MARK}${JSON.stringify(names)}\n`);
      } catch {
        // stdout is gone: the runner hears nothing more of this file
      }
    }
  });
}

function takeChannel(runner) {
  const raw = process.env[CHANNEL];
  delete process.env[CHANNEL];
  const fd = Number(raw);
  try {
    if (!raw || !Number.isInteger(fd) || !fs.fstatSync(fd).isFIFO()) return;
  } catch {
    return;
  }
  takeAssert();
  const open = (name) => {
    sessions += 1;
    const key = `${process.pid}-${sessions}`;
    const send = (event, fields) => {
      try {
        fs.writeSync(fd, JSON.stringify({ s: key, runner: name, event, ...fields }) + '\n');
      } catch {
        // the channel is gone: the gate sees the session without its end
      }
    };
    send('open', {});
    return {
      test: (fields) => send('test', fields),
      altered: (names) => send('altered', { names }),
      end: (status) => {
        const names = altered();
        if (names.length) send('altered', { names });
        send('end', { status });
      },
    };
  };
  Object.defineProperty(globalThis, Symbol.for('autobuild.gate.channel'), { value: { runner, open, mark: MARK } });
}

const MOCHA = /\/mocha\/(bin\/(mocha(\.js)?|_mocha)|lib\/cli\/cli\.js)$/;

function runnerOf(main) {
  if (/\/jest(-cli)?\/bin\/jest\.js$|\/react-scripts\/scripts\/test\.js$/.test(main)) return 'jest';
  if (/\/vitest\/vitest\.mjs$/.test(main)) return 'vitest';
  if (MOCHA.test(main)) return 'mocha';
  if (process.execArgv.includes('--test') && !process.env.NODE_TEST_CONTEXT) return 'node --test';
  return undefined;
}

// node starts its children without the descriptor: a process that is no runner (npm, yarn, pnpm running a script)
// hands it on by the same number, so a runner its script starts still finds it; mocha's own bin, which took it,
// hands it on with its variable to the mocha it starts again as its child when node flags are given (fork, which
// mocha's parallel workers are started by, is left alone: they report to the main process).
function handOn(fd, variable) {
  try {
    if (!Number.isInteger(fd) || fd < 3 || fd > 255 || !fs.fstatSync(fd).isFIFO()) return;
  } catch {
    return;
  }
  const childProcess = require('node:child_process');
  const withChannel = (options) => {
    const given = (options && options.stdio) || 'pipe';
    const stdio = typeof given === 'string' ? [given, given, given] : [...given];
    const env = variable ? { ...((options && options.env) || process.env), [CHANNEL]: String(fd) } : undefined;
    if (stdio[fd] !== undefined && stdio[fd] !== null) return options;
    for (let index = stdio.length; index < fd; index += 1) stdio[index] = 'ignore';
    stdio[fd] = fd;
    return env ? { ...options, stdio, env } : { ...options, stdio };
  };
  for (const name of ['spawn', 'spawnSync']) {
    const original = childProcess[name];
    childProcess[name] = function spawnWithChannel(command, args, options) {
      if (Array.isArray(args)) return original.call(this, command, args, withChannel(options));
      return original.call(this, command, withChannel(args));
    };
  }
  require('node:module').syncBuiltinESMExports(); // mocha's bin imports spawn as an ES module
}

if (process.env[CHANNEL]) {
  const runner = runnerOf(started());
  const fd = Number(process.env[CHANNEL]);
  if (runner) takeChannel(runner);
  if (runner === 'mocha' && /\/bin\/mocha(\.js)?$/.test(started())) handOn(fd, true);
  else if (!runner) handOn(fd, false);
  const channel = globalThis[Symbol.for('autobuild.gate.channel')];
  if (channel && runner === 'jest') channel.session = channel.open('jest'); // its results come at its end

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
