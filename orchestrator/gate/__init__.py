"""The objective gate: which command checks the work, in which environment, and what its runs mean."""

from orchestrator.facts import GateResult, GateSetup
from orchestrator.gate.accounting import describe as describe_test_change
from orchestrator.gate.accounting import is_test_file, parse_name_status
from orchestrator.gate.accounting import unaccepted as unaccepted_test_changes
from orchestrator.gate.detect import NO_GATE, GateChoice, choose_gate, detect_test_command
from orchestrator.gate.environment import default_setup, gate_env, session_env
from orchestrator.gate.hidden import FOLDER as HIDDEN_FOLDER
from orchestrator.gate.hidden import HiddenTests
from orchestrator.gate.hidden import check as check_hidden_tests
from orchestrator.gate.judge import judge, judged_run, tests_not_run, tests_only_skipped, unusable
from orchestrator.gate.report import gate_document, gate_lines
from orchestrator.gate.result import BY_EXIT, describe_base, no_gate, run_gate
from orchestrator.gate.service import GateRequest, GateRun, Gates
from orchestrator.gate.shifted import NOTE as SHIFTED_IDS_NOTE
from orchestrator.gate.shifted import case_diff
from orchestrator.gate.submodules import refusal as submodule_refusal
from orchestrator.gate.submodules import submodule_changes, undo_submodule_changes

__all__ = ["BY_EXIT", "HIDDEN_FOLDER", "NO_GATE", "SHIFTED_IDS_NOTE", "GateChoice", "GateRequest", "GateResult",
           "GateRun", "GateSetup", "Gates", "HiddenTests", "case_diff", "check_hidden_tests", "choose_gate",
           "default_setup", "describe_base", "describe_test_change", "detect_test_command", "gate_document",
           "gate_env", "gate_lines", "is_test_file", "judge", "judged_run", "no_gate", "parse_name_status",
           "run_gate", "session_env", "submodule_changes", "submodule_refusal", "tests_not_run",
           "tests_only_skipped", "unaccepted_test_changes", "undo_submodule_changes", "unusable"]
