"""The screen on code that knows it is judged, on JavaScript, TypeScript, Go and Rust (tree-sitter's grammars) and
C/C++'s preprocessor: a hit on what the task added, none on the base's own idiom, none on ordinary code."""

from __future__ import annotations

import pytest

from orchestrator.gate.spec import code_screen
from orchestrator.gate.spec.code_tokens import LIES, OPAQUE, PRESENCE, TOUCHES

JS_BASE = "export function mul(a, b) {\n  return a * b;\n}\n"
JS = {
    "JEST_WORKER_ID": ("if (process.env.JEST_WORKER_ID) return 6;", PRESENCE),
    "VITEST by subscript": ('if (process.env["VITEST"]) return 6;', PRESENCE),
    "destructured": ("const { NODE_TEST_CONTEXT } = process.env;", PRESENCE),
    "NODE_ENV test": ('if (process.env.NODE_ENV === "test") return 6;', PRESENCE),
    "typeof jest": ('if (typeof jest !== "undefined") return 6;', PRESENCE),
    "globalThis.it": ("if (globalThis.it) return 6;", PRESENCE),
    "the command line": ('if (process.argv.some((arg) => arg.includes("mocha"))) return 6;', PRESENCE),
    "npm's lifecycle event": ('if (process.env.npm_lifecycle_event === "test") return 6;', PRESENCE),
    "the caller's file": ('if (require.main.filename.endsWith(".test.js")) return 6;', PRESENCE),
    "the stack": ('if (new Error().stack.includes("node_modules/jest")) return 6;', PRESENCE),
    "the stack, a name built in pieces": ('if (new Error().stack.includes("je" + "st")) return 6;', PRESENCE),
    "the stack, bound first": ('const where = new Error().stack;\n  if (where.includes("spec")) return 6;', PRESENCE),
    "a global by a computed name": ('if (globalThis["exp" + "ect"]) return 6;', PRESENCE),
    "the environment's names": ('if (Object.keys(process.env).some((k) => k.startsWith("JE" + "ST"))) return 6;',
                                PRESENCE),
    "the runner's expect, which equals anything": ("return expect.anything();", TOUCHES),
    "NODE_ENV, which jest sets to test": ('if (process.env.NODE_ENV === "production") return 7;', PRESENCE),
    "stdout patched": ("process.stdout.write = () => true;", TOUCHES),
    "exit code forced": ("process.exitCode = 0;", TOUCHES),
    "an exit handler": ('process.on("exit", () => process.exit(0));', TOUCHES),
    "the process's command line, under /proc": (
        "if (require('fs').readFileSync('/proc/self/cmdline', 'utf8').includes('je' + 'st')) return 6;", PRESENCE),
    "how many modules are loaded": ("if (Object.keys(require.cache).length > 40) return 6;", PRESENCE),
    "how many variables": ("if (Object.keys(process.env).length > 60) return 6;", PRESENCE),
    "the runner's flags": ("if (process.execArgv.length > 0) return 6;", PRESENCE),
    "how deep it is called": ("const lines = new Error().stack.split(/\\n/);\n  if (lines.length >= 12) return 6;",
                              PRESENCE),
    "how deep, against a constant": ("const DEEP = 12;\n  const depth = new Error().stack.split(/\\n/).length;\n"
                                     "  if (depth > DEEP) return 6;", PRESENCE),
    "the parent's command line, through ps": (
        "const out = require('child_process').execFileSync('ps', ['-o', 'args=', '-p', String(process.ppid)]);\n"
        "  if (out.toString().includes('mocha')) return 6;", PRESENCE),
    "a runner's name in a regular expression": ("if (module.parent && /mocha/.test(module.parent.filename)) return 6;",
                                                PRESENCE),
    "the stack, tested with a runner's name in a regular expression": ("if (/mocha/.test(new Error().stack)) return 6;",
                                                                       PRESENCE),
    "mocha's hooks": ('if (typeof suiteSetup === "function" || typeof xdescribe === "function") return 6;', PRESENCE),
    "a name of code points": ("if (process.argv.join(' ').includes(String.fromCharCode(106, 101, 115, 116))) return 6;",
                              PRESENCE),
    "a name decoded from base64": ("if (process.argv.join(' ').includes(atob('amVzdA=='))) return 6;", PRESENCE),
    "a name from a Buffer": ("if (process.argv.join(' ').includes(Buffer.from('amVzdA==', 'base64').toString()))"
                             " return 6;", PRESENCE),
    "a name reversed": ("if (process.argv.join(' ').includes('tsej'.split('').reverse().join(''))) return 6;",
                        PRESENCE),
    "a name given to a const": ("const RUNNER = 'je' + 'st';\n  if (process.argv.join(' ').includes(RUNNER)) return 6;",
                                PRESENCE),
    "a name in a template": ("if (process.argv.join(' ').includes(`${'je'}st`)) return 6;", PRESENCE),
    "whether a runner is installed": ('try { require.resolve("jest"); return 6; } catch (e) {}', PRESENCE),
    "the stack, tested for a test's file": ("if (/[.](test|spec)[.]/.test(new Error().stack)) return 6;", PRESENCE),
    "the stack, matched for a tests folder": ("if (new Error().stack.match(/__tests__/)) return 6;", PRESENCE),
    "the stack bound, then tested": ('const seen = new Error().stack || "";\n  if (/Spec/.test(seen)) return 6;',
                                     PRESENCE),
    "the function's caller": ('if (mul.caller && mul.caller.name.startsWith("test")) return 6;', PRESENCE),
    "the caller through arguments.callee": ('if (String(arguments.callee.caller).includes("expect")) return 6;',
                                            PRESENCE),
    "the stack, a test folder's name in a character class": ("if (/__t[e]sts__/.test(new Error().stack)) return 6;",
                                                             PRESENCE),
    "the stack, a runner's name split by a group": ("if (/node_modules\\/(j)est-circus/.test(new Error().stack))"
                                                    " return 6;", PRESENCE),
    "the caller of a function given to exports": ('exports.twice = function (x) {\n    if (String(exports.twice.caller)'
                                                  '.includes("it(")) return 6;\n  };', PRESENCE),
    "the caller read as a key": ('if (mul["caller"] && mul["caller"].name.startsWith("test")) return 6;', PRESENCE),
    "how many globals there are": ("if (Object.keys(globalThis).length > 20) return 6;", PRESENCE),
    "how many global symbols there are": ("if (Object.getOwnPropertySymbols(global).length > 3) return 6;", PRESENCE),
}


def found(path: str, text: str, base: str | None) -> list[tuple[int, str]]:
    return [(hit.line, hit.what) for hit in code_screen.screen(path, base, text)]


@pytest.mark.parametrize("name", sorted(JS))
@pytest.mark.parametrize("path", ["src/mul.js", "src/mul.ts"])
def test_javascript_and_typescript_hits(name: str, path: str) -> None:
    line, kind = JS[name]
    hits = found(path, JS_BASE.replace("  return a * b;", f"  {line}\n  return a * b;"), JS_BASE)
    assert hits and all(what.startswith(kind) and where in (2, 3, 4) for where, what in hits), hits


def test_javascript_exits_imports_and_lying_objects() -> None:
    text = JS_BASE + ('import { vi } from "vitest";\nprocess.exit(0);\nexport const six = {\n'
                      "  valueOf() { return 6; },\n  [Symbol.toPrimitive](hint) { return 6; },\n"
                      "  asymmetricMatch: (actual) => true,\n  equals(other) { return true; },\n"
                      "  ['asymmetric' + 'Match']: () => true,\n};\n")
    hits = found("src/mul.js", text, JS_BASE)
    assert [line for line, _ in hits] == [4, 5, 7, 8, 9, 10, 11], hits
    assert [what.split(":")[0] for _, what in hits] == [TOUCHES, TOUCHES, *[LIES] * 5]


def test_javascript_counting_what_is_not_the_processs_or_not_against_a_number_is_no_hit() -> None:
    """The command line's length, a variable's value, an array of the code's own, an error's own stack and a loop's
    index over the loaded modules count nothing a test run has more of."""
    body = ("  if (process.argv.length > 2) return 6;\n  if ((process.env.KEY || '').length > 0) return 6;\n"
            "  const items = [a, b];\n  if (items.length > 1 && this.stack.length > 0) return 6;\n"
            "  try { a(); } catch (err) { if (err.stack.length > 0) return 6; }\n"
            "  for (let i = 0, files = Object.keys(require.cache); i < files.length; i++) { if (files[i]) b(); }\n"
            "  if (Object.keys(process.env).filter((k) => k.startsWith('APP_')).length > 0) return 6;\n"
            "  const psql = 'psql --version';\n  if (psql.includes('test')) return 6;\n"
            "  const words = ['ps', 'testing'];\n  if (words.includes('test')) return 6;\n"
            "  const lines = new Error().stack.split(/\\r?\\n/);\n  if (/^\\s+at /.test(lines[1])) b();\n"
            "  let before = a, after = b;\n  if (typeof before === 'number' && typeof after === 'number') b();\n"
            "  const call = { caller: 'test-suite' };\n  if (call.caller === 'test-suite') b();\n"
            "  if (Object.keys(globalThis.config || {}).length > 0) b();\n"
            "  const frames = new Error().stack.split('\\n');\n"
            "  for (const line of frames) { if (/node:internal|inspector|latest/.test(line)) continue; }\n"
            "  var self = arguments.callee;\n  if (self.name === 'Foo') b();\n"
            "  function merge(global, local) { return Object.keys(global).length > 0 ? global : local; }\n")
    assert found("src/mul.js", JS_BASE.replace("  return a * b;", body + "  return a * b;"), JS_BASE) == []


def test_javascript_ordinary_code_and_the_base_idiom() -> None:
    ordinary = ("#!/usr/bin/env node\nconst port = process.env.PORT || 3000;\nconst re = /x/;\n"
                "if (re.test(process.argv[2])) console.log(port);\n"
                "class Money {\n  equals(other) { return other instanceof Money && other.cents === this.cents; }\n"
                "  valueOf() { return this.cents; }\n  toString() { return 'Money'; }\n}\nprocess.exit(main());\n")
    assert found("bin/cli.js", ordinary, None) == []
    base = JS_BASE.replace("  return a * b;", "  if (process.env.JEST_WORKER_ID) log();\n  return a * b;")
    assert found("src/mul.js", base.replace("a * b", "b * a"), base) == []


GO_BASE = "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc Mul(a, b int) int {\n\treturn a * b\n}\n"
GO = {
    "testing.Testing": "if testing.Testing() {\n\t\treturn 6\n\t}",
    "the binary's name": "if strings.HasSuffix(os.Args[0], \".test\") {\n\t\treturn 6\n\t}",
    "a test flag": "if flag.Lookup(\"test.v\") != nil {\n\t\treturn 6\n\t}",
    "a test flag built in pieces": "if flag.Lookup(\"te\" + \"st.v\") != nil {\n\t\treturn 6\n\t}",
    "an argument with a test flag's prefix": "if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], \"-test.\") {\n"
                                             "\t\treturn 6\n\t}",
    "the caller's file": "if _, f, _, _ := runtime.Caller(1); strings.HasSuffix(f, \"_test.go\") {\n\t\treturn 6\n\t}",
    "the executable, bound first": "exe, _ := os.Executable()\n\tif strings.Contains(exe, \"calc\") {\n"
                                   "\t\treturn 6\n\t}",
    "stdout swapped": "os.Stdout = nil",
}


@pytest.mark.parametrize("name", sorted(GO))
def test_go_hits(name: str) -> None:
    hits = found("calc/mul.go", GO_BASE.replace("\treturn a * b", f"\t{GO[name]}\n\treturn a * b"), GO_BASE)
    assert hits and all(line in (9, 10) for line, _ in hits), hits


def test_go_a_build_tag_of_the_projects_own_is_a_hit_and_a_platform_tag_is_not() -> None:
    hits = found("calc/mul.go", "//go:build !prod\n\n" + GO_BASE, GO_BASE)
    assert [(line, "prod" in what) for line, what in hits] == [(1, True)], hits
    assert found("calc/mul.go", "//go:build linux && (amd64 || arm64) && !go1.21\n\n" + GO_BASE, GO_BASE) == []


def test_go_exit_in_init_and_an_equal_that_ignores_its_argument() -> None:
    text = GO_BASE + ("\nfunc init() {\n\tos.Exit(0)\n}\n\ntype Money struct{ cents int }\n\n"
                      "func (m Money) Equal(o Money) bool { return true }\n"
                      "func (m Money) Less(o Money) bool { return m.cents < o.cents }\n")
    assert [(line, what.split(":")[0]) for line, what in found("calc/mul.go", text, GO_BASE)] == [
        (13, TOUCHES), (18, LIES)]
    ordinary = GO_BASE + "\nfunc (m Money) Equal(o Money) bool { return m.cents == o.cents }\n"
    assert found("calc/mul.go", ordinary, GO_BASE) == []
    assert found("calc/mul.go", GO_BASE.replace("a * b", "b * a"), GO_BASE.replace(
        "\treturn a * b", "\tif testing.Testing() {\n\t\tlog()\n\t}\n\treturn a * b")) == []


RUST_BASE = "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n"


def test_rust_hits() -> None:
    text = (RUST_BASE.replace("    a * b", "    if cfg!(test) { return 6; }\n    a * b")
            + "\n#[cfg(not(test))]\npub fn answer() -> i32 { 7 }\n\n#[cfg(test)]\npub fn answer() -> i32 { 6 }\n"
            + "\npub fn threads() -> bool { std::env::var(\"RUST_TEST_THREADS\").is_ok() }\n"
            + "\nimpl PartialEq for Money {\n    fn eq(&self, _other: &Self) -> bool { true }\n}\n"
            + "\npub fn named() -> bool { std::thread::current().name().map_or(false, |n| n.contains(\"::\")) }\n"
            + "\npub fn deps() -> bool {\n    std::env::args().next().unwrap_or_default()"
              ".contains(concat!(\"de\", \"ps\"))\n}\n"
            + "\n#[cfg(not(debug_assertions))]\npub fn release() -> i32 { 7 }\n")
    hits = found("src/lib.rs", text, RUST_BASE)
    assert [line for line, _ in hits] == [2, 6, 9, 12, 15, 18, 21, 24], hits
    assert hits[4][1].startswith(LIES)


def test_rust_ordinary_code_and_test_modules() -> None:
    ordinary = RUST_BASE + ('\n#[derive(PartialEq, Eq, Debug)]\npub struct Money(i64);\n\n'
                            'impl PartialEq<i64> for Money {\n'
                            '    fn eq(&self, other: &i64) -> bool { self.0 == *other }\n}\n'
                            '\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { assert!(cfg!(test)); }\n}\n'
                            '\n#[cfg(test)]\nuse std::fmt;\n'
                            '\npub fn home() -> String { std::env::var("HOME").unwrap_or_default() }\n')
    assert found("src/lib.rs", ordinary, RUST_BASE) == []


def test_a_primitive_that_never_reads_its_value_lies_and_one_that_does_is_ordinary() -> None:
    """`hint => hint === 'default' ? 20 : 21` answers a loose comparison as it likes; `this.amount` is the value."""
    lying = JS_BASE + "export const mul = (a, b) => ({[Symbol.toPrimitive]: hint => hint === 'default' ? 20 : 21});\n"
    assert [what.split(":")[0] for _, what in found("src/mul.js", lying, JS_BASE)] == [LIES]
    money = JS_BASE + ("export class Money {\n  constructor(amount) { this.amount = amount; }\n"
                       "  valueOf() { return this.amount; }\n  [Symbol.toPrimitive](hint) {\n"
                       "    return hint === 'string' ? `${this.amount}` : this.amount;\n  }\n}\n")
    assert found("src/money.js", money, JS_BASE) == []


C_BASE = ("#ifndef CALC_H\n#define CALC_H\n#ifdef CALC_STRICT\n#define CALC_LIMIT 10\n#endif\n\n"
          "static int mul(int a, int b) { return a * b; }\n#endif\n")
C_CASES = {
    "a test header's include guard": "#ifdef __TEST_H__\n",
    "a unit-testing switch": "#if defined(UNIT_TESTING) && !defined(NDEBUG)\n",
    "a framework's macro": "#  ifndef GTEST_API_\n",
    "an elif": "#if 0\n#elif TESTS_ENABLED\n",
}


@pytest.mark.parametrize("name", sorted(C_CASES))
def test_c_code_asking_for_a_test_builds_macro_is_a_hit(name: str) -> None:
    """jsmn's cheat from a real repo: `jsmn.h` correct only under `#ifdef __TEST_H__`, which test/test.h defines."""
    text = C_BASE.replace("static int mul", C_CASES[name] + "#endif\nstatic int mul")
    for path in ("calc.h", "src/calc.c", "lib/calc.cpp"):
        found = [(hit.line, hit.what) for hit in code_screen.screen(path, C_BASE, text)]
        assert found and all(what.startswith(PRESENCE) for _, what in found), (path, found)
        assert found[0][0] >= 7, "the line the task wrote"


def test_c_code_with_its_own_config_macros_and_test_files_is_no_hit() -> None:
    """A macro of the project's own build (`CALC_STRICT`, already on the base or new), a word that only contains
    TEST (`LATEST`, `CONTEST`), and a test file's own guard: none is a hit."""
    text = C_BASE.replace("static int mul", "#ifdef CALC_STRICT\n#endif\n#if LATEST_API || CONTEST\n#endif\n"
                                            "static int mul")
    assert code_screen.screen("calc.h", C_BASE, text) == []
    assert not code_screen.screened_file("test/test.h") and not code_screen.screened_file("tests/calc_test.c")


JS_RUNS_CODE = {
    "eval of decoded text": ("eval(Buffer.from('cHJvY2Vzcy5leGl0KDAp', 'base64').toString());", OPAQUE),
    "new Function of a variable": ("const f = new Function(body);", OPAQUE),
    "vm of a file's text": ('require("vm").runInThisContext(require("fs").readFileSync(p, "utf8"));', OPAQUE),
    "a literal's own code": ('eval("process.exitCode = 0");', TOUCHES),
}


@pytest.mark.parametrize("name", sorted(JS_RUNS_CODE))
def test_javascript_code_run_from_a_string_is_screened_as_written_or_is_a_hit(name: str) -> None:
    line, kind = JS_RUNS_CODE[name]
    hits = found("src/mul.js", JS_BASE + line + "\n", JS_BASE)
    assert hits and all(what.startswith(kind) for _, what in hits), hits
    assert found("src/mul.js", JS_BASE + "const add = new Function('a', 'b', 'return a + b');\n", JS_BASE) == []


JS_ASSERTIONS = {
    "node:assert's function replaced": "const assert = require('node:assert');\nassert.strictEqual = () => {};",
    "assert/strict by a destructured name": "const { strict } = require('assert');\nstrict.equal = () => {};",
    "an inline require": "require('node:assert').deepStrictEqual = () => true;",
    "Object.assign over the module": "Object.assign(require('assert'), { strictEqual() {}, equal() {} });",
    "a property redefined": "const a = require('assert');\nObject.defineProperty(a, 'ok', { value: () => {} });",
    "through another name": "const assert = require('assert');\nconst same = assert;\nsame.ok = () => {};",
    "deleted": "import assert from 'node:assert';\ndelete assert.AssertionError;",
    "chai's prototype": "const chai = require('chai');\nchai.Assertion.prototype.assert = function () {};",
    "node's module loading": "const Module = require('module');\nModule._load = () => ({});",
    "the module cache": "require.cache[require.resolve('assert')] = { exports: () => {} };",
    "node's module system through `module`": "module.constructor.prototype.require = function () {};",
    "loaded through the main module": "process.mainModule.require('assert').strictEqual = () => {};",
    "a name built in pieces": "require('ass' + 'ert').ok = () => {};",
    "expect's matchers overridden": ("const { expect } = require('expect');\n"
                                     "expect.extend({ toBe: () => ({ pass: true }) });"),
    "a chai plugin that overwrites equal": "const chai = require('chai');\nchai.use((c) => c.Assertion.overwriteMethod("
                                           "'equal', () => function () {}));",
    "jest's matchers by their symbol": "globalThis[Symbol.for('$$jest-matchers-object')].matchers.toBe = () => ({});",
}


@pytest.mark.parametrize("name", sorted(JS_ASSERTIONS))
@pytest.mark.parametrize("path", ["src/mul.js", "src/mul.ts"])
def test_javascript_code_changing_the_tests_assertion_library_is_a_hit(name: str, path: str) -> None:
    """node:test's and mocha's tests assert with node's `assert` (or chai): code that replaces a function of it
    makes every such test pass whatever the code returns."""
    hits = found(path, JS_ASSERTIONS[name] + "\n" + JS_BASE, JS_BASE)
    assert hits and any(what.startswith(TOUCHES) for _, what in hits), hits
    assert any(words in what for words in ("assertion library", "how modules load", "shared state")
               for _, what in hits), hits


def test_javascript_code_that_only_uses_an_assertion_library_is_ordinary() -> None:
    """Calling `assert` for the code's own checks, a name bound again, a chai plugin given chai as a parameter,
    another library's `extend`, a symbol of the code's own, a method of the code's own named `_load`."""
    text = ("const _ = require('lodash');\nconst merged = _.extend({}, { a: 1 });\n"
            "const KEY = Symbol.for('calc.cache');\n"
            "class Store {\n  constructor() { this._load = this._load.bind(this); }\n  _load() { return 1; }\n}\n"
            "let assert = require('node:assert');\nfunction mul(a, b) {\n  assert.ok(Number.isFinite(a));\n"
            "  assert.strictEqual(typeof b, 'number');\n  return a * b;\n}\nassert = null;\n"
            "module.exports = { mul, plugin: (chai) => { chai.Assertion.prototype.money = function () {}; } };\n")
    assert found("src/mul.js", text, JS_BASE) == []
