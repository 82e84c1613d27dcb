"""Model routing reaches the sessions: each task's player and coach run the model of its complexity's range, the
planner never a routed one, and `--model` / `--coach-model` win over the routing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from tests.graph.harness import CALC_FILES, Workflow, plan, task

ROUTING = {"by_complexity": {"1-3": "small-model", "4-10": "big-model"}}


class RecordingModels(ScriptedAgents):
    """Scripted sessions that note the model each one was given."""

    def __init__(self) -> None:
        super().__init__({("player", "EASY"): writes({"calc/sub.py": "S = 1\n"}),
                          ("player", "HARD"): writes({"calc/mul.py": "M = 1\n"}), "coach": approve()})
        self.models: set[tuple[str, str, Any]] = set()

    async def player(self, data: Any, settings: Any) -> Any:
        self.models.add(("player", data.brief.task_id, settings.model))
        return await super().player(data, settings)

    async def coach(self, data: Any, settings: Any) -> Any:
        self.models.add(("coach", data.brief.task_id, settings.model))
        return await super().coach(data, settings)


def _repo(tmp_path: Path) -> Path:
    return make_sample_repo(tmp_path / "repo", files=CALC_FILES,
                            plan=plan(task("EASY", complexity=2), task("HARD", complexity=8)))


async def test_each_task_s_sessions_run_the_model_of_its_complexity(tmp_path: Path) -> None:
    agents = RecordingModels()
    run = await Workflow(_repo(tmp_path), agents).run(models=ROUTING)
    assert run.status("EASY") == run.status("HARD") == "approved"
    assert agents.models == {("player", "EASY", "small-model"), ("coach", "EASY", "small-model"),
                             ("player", "HARD", "big-model"), ("coach", "HARD", "big-model")}


async def test_model_and_coach_model_win_over_the_routing(tmp_path: Path) -> None:
    agents = RecordingModels()
    run = await Workflow(_repo(tmp_path), agents).run(models=ROUTING, model="mine", coach_model="judge")
    assert run.status("HARD") == "approved"
    assert agents.models == {("player", "EASY", "mine"), ("coach", "EASY", "judge"),
                             ("player", "HARD", "mine"), ("coach", "HARD", "judge")}
