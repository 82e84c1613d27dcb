"""The tests are the spec for jest, vitest and mocha: the full matrix of cheats on the real runners (installed by
`make install` into .venv/js from the npm registry), in-process on the compiled graphs as
tests/graph/test_tests_are_spec.py does for node. Turn 1 breaks `mul` and bends the test that catches it, the
blind coach approves and the gate refuses, naming the test by its file and suite path; turn 2 puts things right
and is approved. A legitimate test change the coach accepts is approved."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.js_cheats import RUNNERS, TOOLS, cheats, js_repo, legitimate
from tests.graph.harness import Workflow, plan, task
from tests.graph.test_tests_are_spec import cheat, first_gate

pytestmark = [pytest.mark.heavy,
              pytest.mark.skipif(shutil.which("node") is None or not all((TOOLS / r).is_dir() for r in RUNNERS),
                                 reason="jest, vitest and mocha are installed into .venv/js by make install")]

MATRIX = [(runner, name) for runner in RUNNERS for name in cheats(runner)]


def runner_repo(tmp_path: Path, runner: str) -> Path:
    """The runner's sample package, its `node_modules` (git-ignored) the one make install filled."""
    repo = make_sample_repo(tmp_path / "repo", files=js_repo(runner).files,
                            plan=plan(task("TASK-001"), verify="npm test"), venv=False)
    (repo / "node_modules").symlink_to(TOOLS, target_is_directory=True)
    return repo


@pytest.mark.parametrize(("runner", "name"), MATRIX, ids=[f"{r}: {n}" for r, n in MATRIX])
async def test_a_blind_approval_of_a_bent_js_test_is_refused_naming_it(tmp_path: Path, runner: str,
                                                                      name: str) -> None:
    repo, sample = runner_repo(tmp_path, runner), js_repo(runner)
    files, named = cheats(runner)[name]
    honest = {path: sample.files.get(path) for path in files} | {"mul.js": sample.files["mul.js"],
                                                                  "div.js": "exports.div = 1;\n"}
    run = await cheat(repo, {**sample.broken, **files}, honest)
    gate = first_gate(run)
    assert not gate["passed"], f"{runner}: {name}: the blind approval was not refused: {gate['summary']}"
    assert named in gate["summary"], gate["summary"]
    assert run.status("TASK-001") == "approved", f"turn 2 put the code right: {run.results['TASK-001']}"


@pytest.mark.parametrize("runner", RUNNERS)
async def test_a_legitimate_js_test_change_the_coach_accepts_is_approved(tmp_path: Path, runner: str) -> None:
    repo = runner_repo(tmp_path, runner)
    files, accepts = legitimate(runner)
    agents = ScriptedAgents({"player": writes(files), "coach": approve(accepts=accepts)})
    run = await Workflow(repo, agents).run(max_turns=1)
    assert run.status("TASK-001") == "approved", first_gate(run)["summary"]
    assert [change["test"] for change in run.results["TASK-001"]["test_changes"]] == [
        "test/mul.test.js > mul > zero"]
