"""The tests are the spec: what became of every base test on a judged tree, the tamper screens on tests and on code, the
task's new tests on the base's code, and the hidden acceptance tests.

no_baseline.py: a base whose tests never ran (import, collection, build errors) is no baseline.
spec_check.py: the tests are the spec: what became of every base test on the judged tree.
accounting.py: every test that passed on the base must pass on the judged tree.
test_files.py: which files are test code, test data, support modules and runner config.
overlay.py: the base's test files put back over the task's code.
new_tests.py: a task's new tests run on the base's code: a feature's or fix's must be able to fail there.
cross_tests.py: one attempt's new tests run on another attempt's code (the selection among a task's attempts).
screen.py: the tamper screen on what a task added to test code (skip, only, xfail markers).
code_screen.py: the screen on code that knows it is judged, in the code files a task added or changed.
oversized.py: the most the gate reads of a file, and a file the task made larger as a finding.
code_tokens.py: what that screen looks for in every language, and tree-sitter's parsers.
code_python.py: Python code that knows it is judged, read with `ast`.
py_module.py: a Python file parsed for that screen: aliases, parents, what its names are given.
py_presence.py: Python code that reads whether a test runner is running.
py_strings.py: strings Python code builds from constants, folded as the interpreter would.
js_strings.py: strings JavaScript code builds from constants, folded as the engine would.
code_js.py: JavaScript and TypeScript code that knows it is judged, read with tree-sitter.
js_presence.py: of it, what reads whether a test runner is running (its names, the gate's place, counts).
code_native.py: Go and Rust code that knows it is judged, read with tree-sitter.
vacuous.py: assertions that can't fail or never run, per runner, for the tamper screen.
shifted.py: test ids that shift when a case is dropped, and the diff that shows which case.
package_accounting.py: a monorepo's accounting, package by package.
inline_tests.py: tests inside code files (Rust's `#[cfg(test)]`, doctests).
inline_splice.py: a Rust code file as the base has it with the task's test modules, for the new-tests run.
hidden.py: hidden acceptance tests: checked, run in a tree of the gate's own, redacted.
"""
