"""The objective gate: which command checks the work, in which environment, and what its runs mean.

Outside gate/, code imports only what this module exports (tests/unit/test_package_maps.py).

service.py: the one entry point (`Gates`, `GateRequest`): decide, check the base, run a tree.
baseline.py: the gate checked on the base before any money is spent.
cache.py: gate runs remembered by tree, command, setup and environment, per repository.
verdict.py: the verdict, one pure function over a gate run's evidence: the only writer of `passed`.
report.py: what `validate` and `run --dry-run` say about the gate before anything runs.
choose/: which command gates: `--verify`, the plan's, the maintainers' own, per monorepo package, as on the base.
prepare/: the tree and environment a command runs in: fresh, the clean room, node_modules, submodules.
observe/: one run of the command and what it showed, by runner, on the gate's own channel.
spec/: the tests are the spec: every base test accounted for, the screens, new tests, hidden tests.
"""

from orchestrator.facts import GateResult, GateSetup, Observation
from orchestrator.gate.choose.detect import NO_GATE, GateChoice, choose_gate, detect_test_command
from orchestrator.gate.observe.instrument import NODE_REPORTER
from orchestrator.gate.observe.instrument import SHIM as RUNNER_SHIM
from orchestrator.gate.observe.judge import judge, judged_run, tests_not_run, tests_only_skipped
from orchestrator.gate.observe.observed import BY_EXIT, unusable
from orchestrator.gate.observe.result import describe_base, run_gate
from orchestrator.gate.observe.runners import Observed
from orchestrator.gate.observe.runners.native import cargo_test, go_test
from orchestrator.gate.prepare.environment import default_setup, gate_env, session_env
from orchestrator.gate.prepare.submodules import refusal as submodule_refusal
from orchestrator.gate.prepare.submodules import submodule_changes, undo_submodule_changes
from orchestrator.gate.report import gate_document, gate_lines
from orchestrator.gate.service import GateRequest, GateRun, Gates
from orchestrator.gate.spec.accounting import describe as describe_test_change
from orchestrator.gate.spec.accounting import parse_name_status
from orchestrator.gate.spec.accounting import unaccepted as unaccepted_test_changes
from orchestrator.gate.spec.code_screen import hits as code_screen_hits
from orchestrator.gate.spec.code_screen import read_by_gate
from orchestrator.gate.spec.hidden import FOLDER as HIDDEN_FOLDER
from orchestrator.gate.spec.hidden import HiddenTests
from orchestrator.gate.spec.hidden import check as check_hidden_tests
from orchestrator.gate.spec.inline_tests import changed as inline_tests_changed
from orchestrator.gate.spec.oversized import changes as too_large_files
from orchestrator.gate.spec.shifted import NOTE as SHIFTED_IDS_NOTE
from orchestrator.gate.spec.shifted import case_diff
from orchestrator.gate.spec.test_files import is_test_data, is_test_file
from orchestrator.gate.verdict import VERDICT_RULES, Evidence, Verdict, decide, no_gate

__all__ = ["BY_EXIT", "HIDDEN_FOLDER", "NODE_REPORTER", "NO_GATE", "RUNNER_SHIM", "SHIFTED_IDS_NOTE", "VERDICT_RULES",
           "Evidence", "GateChoice", "GateRequest", "GateResult", "GateRun", "GateSetup", "Gates", "HiddenTests",
           "Observation", "Observed", "Verdict", "cargo_test", "case_diff", "check_hidden_tests", "choose_gate",
           "code_screen_hits", "decide", "default_setup", "describe_base", "describe_test_change",
           "detect_test_command", "gate_document", "gate_env", "gate_lines", "go_test", "inline_tests_changed",
           "is_test_data", "is_test_file", "judge", "judged_run", "no_gate", "parse_name_status", "read_by_gate",
           "run_gate", "session_env", "submodule_changes", "submodule_refusal", "tests_not_run", "tests_only_skipped",
           "too_large_files", "unaccepted_test_changes", "undo_submodule_changes", "unusable"]
