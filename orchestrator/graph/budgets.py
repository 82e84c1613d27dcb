"""The budgets a person raised at their cap (an interactive run asks, graph/nodes/budget_question.py): run-wide,
and kept in the feature's run folder (`budgets.json`), so a resume or a served run's next invocation neither asks
again nor stops at the old cap. A raise holds only while the budget it raised is still the one set: a run given
another `--budget-usd` goes by that."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.repo import run_files

FILE = "budgets.json"
FEATURE = "feature"
"""The key of the feature's budget (`--budget-usd`); a task's is its id."""


@dataclass
class RaisedBudgets:
    """By budget (FEATURE or a task id): the budget that was set and the one a person raised it to."""

    raised: dict[str, tuple[float, float]] = field(default_factory=dict)
    loaded: bool = False
    """Read from the run's folder already (once a budget was first found spent)."""

    def budget(self, key: str, configured: float | None) -> float | None:
        """The budget in force: the person's raise of `configured`, else `configured`."""
        if configured is None or key not in self.raised:
            return configured
        was, now = self.raised[key]
        return now if abs(was - configured) < 1e-9 else configured

    def load(self, folder: Path) -> None:
        """The raises kept by earlier passes of this run (blocking: call it off the event loop). A file that can't
        be read is as none: the person is asked again."""
        if self.loaded:
            return
        self.loaded = True
        try:
            data = json.loads(run_files.read(folder / FILE, "the run's raised budgets") or "{}")
        except (OSError, ValueError):
            return
        for key, pair in (data.items() if isinstance(data, dict) else ()):
            if isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, int | float) for v in pair):
                self.raised.setdefault(str(key), (float(pair[0]), float(pair[1])))

    def keep(self, folder: Path, key: str, was: float, now: float) -> None:
        """Raise `key`'s budget from `was` to `now`, and keep it in the run's folder (blocking)."""
        self.raised[key] = (was, now)
        text = json.dumps({name: list(pair) for name, pair in sorted(self.raised.items())}, indent=1) + "\n"
        run_files.write(folder / FILE, text, "the run's raised budgets")
