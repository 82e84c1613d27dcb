"""node --test names a test file that declares no test (a helper under test/, a file for another runner) by its
absolute path: the base's worktree and a task's lie in different folders, so that id must not carry the folder,
or every such file reads as a base test gone from an honest task (found replaying process-warning 5.0.0 -> 5.1.0,
issue 31's real history)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.cheat_corpus import NODE_BROKEN, NODE_FILES
from orchestrator.cli.demo import make_sample_repo
from tests.graph.harness import Workflow, plan, task

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node runs the gate's node --test")

FILES = {**NODE_FILES, "test/helper.js": "module.exports = { two: 2 };\n"}


def node_repo(tmp_path: Path) -> Path:
    return make_sample_repo(tmp_path / "repo", files=FILES, plan=plan(task("TASK-001"), verify="node --test"),
                            venv=False)


async def test_a_test_file_without_tests_is_the_same_id_in_every_worktree(tmp_path: Path) -> None:
    agents = ScriptedAgents({"player": writes({"div.js": "exports.div = (a, b) => a / b;\n"}), "coach": approve()})
    run = await Workflow(node_repo(tmp_path), agents).run(max_turns=1)
    gate = next(event for event in run.events if event["event"] == "gate")
    assert run.status("TASK-001") == "approved", gate["summary"]
    assert str(tmp_path) not in gate["summary"]


async def test_deleting_such_a_file_is_still_named(tmp_path: Path) -> None:
    agents = ScriptedAgents({"player": writes({"mul.js": NODE_BROKEN, "test/helper.js": None,
                                               "test/mul.test.js": None}), "coach": approve()})
    run = await Workflow(node_repo(tmp_path), agents).run(max_turns=1)
    gate = next(event for event in run.events if event["event"] == "gate")
    assert run.status("TASK-001") != "approved", gate["summary"]
    assert "test/helper.js > test/helper.js: gone" in gate["summary"]
