"""The objective gate: which command checks the work, in which environment, and what its runs mean.

Outside gate/, code imports only what this module exports (tests/unit/test_package_maps.py).

service.py: the one entry point (`Gates`, `GateRequest`): decide, check the base, run a tree.
detect.py: which command gates a run: `--verify`, the plan's `verify`, else the repo's own tests.
maintainers.py: the maintainers' own test command, read from their Makefile, tox, nox or CI files.
candidates.py: the test commands one folder's files call for, best first.
monorepo.py: every package of a monorepo that has its own tests.
ci_build.py: a CI job's ctest step with the build steps before it, as one command.
base_command.py: the command as the base defines it: a task's edit to its script changes nothing.
environment.py: the repo's own environment for the gate, setup and the agents' test runs.
pyenv.py: where the repo's Python environment reaches into the main checkout.
node_modules.py: a worktree's own `node_modules`, workspace packages linked to its code.
node_bins.py: the main checkout's `node_modules/.bin` on a worktree's PATH (yarn's and pnpm's runners need it).
generated.py: the version file an install generated, copied into worktrees when the build config names it.
submodules.py: submodules in a run's worktrees, and a task's changes inside one found and undone.
baseline.py: the gate checked on the base before any money is spent.
fresh_tree.py: what agents left in a worktree outside git is removed before a gate run there.
checkout.py: a worktree's tracked files put back to its commit's, whatever its index (the agents') says.
no_baseline.py: a base whose tests never ran (import, collection, build errors) is no baseline.
cache.py: gate runs remembered by tree, command, setup and environment, per repository.
result.py: runs of the gate command and what they observed.
observed.py: what one run shows on its own: judged by ids, counts or exit status; ran no test; can't run.
instrument.py: test ids from runners the gate does not control, through their environment.
channel.py: the gate's own pipe out of a run, where the runners' reporters write as tests end.
summaries.py: every end-of-session summary a runner printed in a run's output.
crosscheck.py: every account of a run must agree; what disagrees is tampering.
stream_checks.py: go's packages and cargo's test binaries, account by account.
tracked.py: which tracked files a run of the gate changed.
runners/: what each runner family observed in one run, from its reports or its output.
excerpt.py: where a failing test's own lines are in a run's output.
failure_message.py: why one failing test failed, in a line, from its runner's own report of it.
judge.py: can the command gate at all, and the runs a verdict is decided on (the flaky re-run).
verdict.py: the verdict, one pure function over a gate run's evidence: the only writer of `passed`.
spec_check.py: the tests are the spec: what became of every base test on the judged tree.
accounting.py: every test that passed on the base must pass on the judged tree.
test_files.py: which files are test code, test data, support modules and runner config.
reads.py: the files each base test read (recorded by the gate's pytest plugin): its data, wherever it lives.
overlay.py: the base's test files put back over the task's code.
clean_room.py: the task's code with the base's test side, where the base's tests give their verdict.
sides.py: which side of the product a file is on: code, test side, or a manifest split key by key.
manifests.py: mixed manifests split key by key: the base's with the task's code-side keys.
new_tests.py: a task's new tests run on the base's code: a feature's or fix's must be able to fail there.
screen.py: the tamper screen on what a task added to test code (skip, only, xfail markers).
code_screen.py: the screen on code that knows it is judged, in the code files a task added or changed.
code_tokens.py: what that screen looks for in every language, and tree-sitter's parsers.
code_python.py: Python code that knows it is judged, read with `ast`.
code_js.py: JavaScript and TypeScript code that knows it is judged, read with tree-sitter.
code_native.py: Go and Rust code that knows it is judged, read with tree-sitter.
vacuous.py: assertions that can't fail or never run, per runner, for the tamper screen.
shifted.py: test ids that shift when a case is dropped, and the diff that shows which case.
per_package.py: a monorepo's gate, run per touched package.
package_accounting.py: a monorepo's accounting, package by package.
inline_tests.py: tests inside code files (Rust's `#[cfg(test)]`, doctests).
inline_splice.py: a Rust code file as the base has it with the task's test modules, for the new-tests run.
hidden.py: hidden acceptance tests: checked, run in a tree of the gate's own, redacted.
report.py: what `validate` and `run --dry-run` say about the gate before anything runs.
"""

from orchestrator.facts import GateResult, GateSetup, Observation
from orchestrator.gate.accounting import describe as describe_test_change
from orchestrator.gate.accounting import parse_name_status
from orchestrator.gate.accounting import unaccepted as unaccepted_test_changes
from orchestrator.gate.code_screen import hits as code_screen_hits
from orchestrator.gate.detect import NO_GATE, GateChoice, choose_gate, detect_test_command
from orchestrator.gate.environment import default_setup, gate_env, session_env
from orchestrator.gate.hidden import FOLDER as HIDDEN_FOLDER
from orchestrator.gate.hidden import HiddenTests
from orchestrator.gate.hidden import check as check_hidden_tests
from orchestrator.gate.inline_tests import changed as inline_tests_changed
from orchestrator.gate.instrument import NODE_REPORTER
from orchestrator.gate.instrument import SHIM as RUNNER_SHIM
from orchestrator.gate.judge import judge, judged_run, tests_not_run, tests_only_skipped
from orchestrator.gate.observed import BY_EXIT, unusable
from orchestrator.gate.report import gate_document, gate_lines
from orchestrator.gate.result import describe_base, run_gate
from orchestrator.gate.runners import Observed
from orchestrator.gate.runners.native import cargo_test, go_test
from orchestrator.gate.service import GateRequest, GateRun, Gates
from orchestrator.gate.shifted import NOTE as SHIFTED_IDS_NOTE
from orchestrator.gate.shifted import case_diff
from orchestrator.gate.submodules import refusal as submodule_refusal
from orchestrator.gate.submodules import submodule_changes, undo_submodule_changes
from orchestrator.gate.test_files import is_test_data, is_test_file
from orchestrator.gate.verdict import VERDICT_RULES, Evidence, Verdict, decide, no_gate

__all__ = ["BY_EXIT", "HIDDEN_FOLDER", "NODE_REPORTER", "NO_GATE", "RUNNER_SHIM", "SHIFTED_IDS_NOTE", "VERDICT_RULES",
           "Evidence", "GateChoice", "GateRequest", "GateResult", "GateRun", "GateSetup", "Gates", "HiddenTests",
           "Observation", "Observed", "Verdict", "cargo_test", "case_diff", "check_hidden_tests", "choose_gate",
           "code_screen_hits", "decide", "default_setup", "describe_base", "describe_test_change",
           "detect_test_command", "gate_document", "gate_env", "gate_lines", "go_test", "inline_tests_changed",
           "is_test_data", "is_test_file", "judge", "judged_run", "no_gate", "parse_name_status", "run_gate",
           "session_env", "submodule_changes", "submodule_refusal", "tests_not_run", "tests_only_skipped",
           "unaccepted_test_changes", "undo_submodule_changes", "unusable"]
