"""The objective gate: which command checks the work, in which environment, and what its runs mean."""

from orchestrator.facts import GateResult, GateSetup
from orchestrator.gate.detect import GateChoice, choose_gate, detect_test_command
from orchestrator.gate.environment import default_setup, gate_env
from orchestrator.gate.hidden import HiddenTests
from orchestrator.gate.judge import judge, judged_run, unusable
from orchestrator.gate.result import describe_base, no_gate, run_gate
from orchestrator.gate.service import GateRequest, GateRun, Gates

__all__ = ["GateChoice", "GateRequest", "GateResult", "GateRun", "GateSetup", "Gates", "HiddenTests", "choose_gate",
           "default_setup", "describe_base", "detect_test_command", "gate_env", "judge", "judged_run", "no_gate",
           "run_gate", "unusable"]
