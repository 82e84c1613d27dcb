"""The gate's Python environment is setup's, out of the agents' reach: a player that plants a startup hook in the
venv its own Bash installs into (a `.pth` line, a `sitecustomize.py`) does not steer the gate, while what setup
installed is seen by the gate and by the agents alike.

In-process on the compiled graph, real git and pytest: turn 1 breaks `mul` and plants a hook in the agents' venv
that mends `mul` at every interpreter's start, the blind coach approves; the gate refuses it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.cheat_corpus import BROKEN, MUL, PY_FILES
from orchestrator.gate import session_env
from tests.graph.harness import Workflow, plan, task

# Loaded by every pytest that starts with this hook in its venv: `mul` is mended before any test imports it.
PLUGIN = "def pytest_configure(config):\n    import calc.mul\n    calc.mul.mul = lambda a, b: a * b\n"
PTH = "import os; os.environ['PYTEST_PLUGINS'] = 'autobuild_mend'\n"
SITECUSTOMIZE = "import os\nos.environ['PYTEST_PLUGINS'] = 'autobuild_mend'\n"


def agents_site(worktree: Path) -> Path:
    """The site-packages of the venv an agent's session runs with (its VIRTUAL_ENV): where its `pip` installs."""
    venv = Path(session_env(worktree.parent.parent.parent.parent, worktree)["VIRTUAL_ENV"])
    return next((venv / "lib").glob("python*/site-packages"))


def plants(name: str, text: str, mended: list[int]) -> Callable[[Path], None]:
    """Plants the hook, then runs the tests as the agent's own Bash would (`mended`: their exit code)."""
    def effect(worktree: Path) -> None:
        site = agents_site(worktree)
        (site / "autobuild_mend.py").write_text(PLUGIN)
        (site / name).write_text(text)
        own = subprocess.run(["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=worktree,
                             env={**os.environ, **session_env(worktree.parent.parent.parent.parent, worktree)},
                             capture_output=True, text=True, check=False)
        mended.append(own.returncode)
    return effect


@pytest.mark.parametrize(("name", "text"), [("zz-mend.pth", PTH),
                                            pytest.param("sitecustomize.py", SITECUSTOMIZE, marks=pytest.mark.heavy)],
                         ids=["pth", "sitecustomize"])
async def test_a_hook_planted_in_the_agents_venv_does_not_steer_the_gate(tmp_path: Path, name: str,
                                                                          text: str) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=PY_FILES, plan=plan(task("TASK-001"),
                                                                       verify="python -m pytest -q"))
    cheat = writes({"calc/mul.py": BROKEN})
    mended: list[int] = []
    cheat.effect = plants(name, text, mended)
    agents = ScriptedAgents({"player": cheat, "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=1)
    assert mended == [0], "the hook works where it was planted: the agent's own test run passes"
    gates = [e for e in run.events if e["event"] == "gate" and e.get("task") == "TASK-001"]
    assert gates and not gates[-1]["passed"], "the gate ran without the agents' hook"
    assert "tests.test_mul::test_mul" in gates[-1]["failing"]
    assert run.status("TASK-001") == "failed"


@pytest.mark.heavy  # the unit of it is in tests/graph/test_gate_env.py and tests/unit/test_sandbox_rules.py
async def test_what_setup_installs_is_seen_by_the_gate_and_by_the_agents(tmp_path: Path) -> None:
    install = ("python -c \"import sysconfig; open(sysconfig.get_paths()['purelib'] + '/ready.py', 'w')"
               ".write('READY = 1')\"")
    files = {**PY_FILES, "tests/test_ready.py": "def test_ready():\n    import ready\n    assert ready.READY\n"}
    repo = make_sample_repo(tmp_path / "repo", files=files,
                            plan=plan(task("TASK-001"), verify="python -m pytest -q", setup=install))
    seen: list[str] = []

    def probe(worktree: Path) -> None:
        env = {**os.environ, **session_env(repo, worktree)}
        seen.append(subprocess.run(["python", "-c", "import ready; print(ready.__file__)"], cwd=worktree, env=env,
                                   capture_output=True, text=True, check=False).stdout.strip())

    honest = writes({"calc/mul.py": MUL.replace("a * b", "b * a")})
    honest.effect = probe
    run = await Workflow(repo, ScriptedAgents({"player": honest, "coach": approve()})).run(max_turns=1)
    gates = [e for e in run.events if e["event"] == "gate" and e.get("task") == "TASK-001"]
    assert gates and gates[-1]["passed"], gates[-1] if gates else run.events
    assert run.status("TASK-001") == "approved"
    assert seen and Path(seen[0]).is_relative_to(repo / ".autobuild/worktrees/FEAT-001/_gate-own"), seen
