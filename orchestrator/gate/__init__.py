"""The objective gate: which command checks the work, in which environment, and what its runs mean."""

from orchestrator.facts import GateResult, GateSetup
from orchestrator.gate.detect import GateChoice, choose_gate, detect_test_command
from orchestrator.gate.environment import default_setup, gate_env
from orchestrator.gate.result import describe_base, judge, no_gate, run_gate, unusable

__all__ = ["GateChoice", "GateResult", "GateSetup", "choose_gate", "default_setup", "describe_base",
           "detect_test_command", "gate_env", "judge", "no_gate", "run_gate", "unusable"]
