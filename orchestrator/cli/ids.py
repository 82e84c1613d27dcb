"""The ids on a command line (a feature, a task, the tasks to run again) checked before anything reads or writes."""

from __future__ import annotations

import argparse

from orchestrator.plan.ids import check_id

_ID_ARGUMENTS = (("feature", "feature"), ("target", "feature or task"), ("task", "task"), ("feature_id", "feature"))
"""Each argument that names a feature or a task, as the parsers name it (`run TARGET`, `show FEAT TASK`, `plan
--id`, `history --task`)."""


def check_id_arguments(args: argparse.Namespace) -> None:
    """Every id given is whole and at most 64 characters (PlanError, one line, exit 2): `FEAT-001\\n` or a 251-character
    id would otherwise reach a file name, a branch or a thread."""
    for name, kind in _ID_ARGUMENTS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            check_id(kind, value)
    for task in getattr(args, "rerun", None) or []:
        check_id("task", task)
