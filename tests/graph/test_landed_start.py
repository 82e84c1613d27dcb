"""A landed task's dependents start at its landing, not after its worktree's removal and its subgraph's end."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from tests.graph.harness import CALC_FILES, Workflow, plan, task

WAIT_S = 20
"""How long the fake git holds A's worktree removal for B to start (only a failing run waits it out)."""


def holding_git(bin_dir: Path, repo: Path, log: Path) -> None:
    """A `git` on PATH that holds the removal of A's worktree until B's `task_ready` is in B's trace, and notes
    whether it came ("started") or the wait ran out ("waited out")."""
    bin_dir.mkdir()
    trace = repo / ".autobuild" / "runs" / "FEAT-001" / "B" / "trace.jsonl"
    script = bin_dir / "git"
    script.write_text(
        "#!/bin/sh\n"
        "case \"$*\" in *'worktree remove'*/FEAT-001/A)\n"
        f"  i=0; while [ $i -lt {WAIT_S * 10} ]; do\n"
        f"    if grep -q task_ready '{trace}' 2>/dev/null; then echo started >> '{log}'; break; fi\n"
        "    i=$((i+1)); sleep 0.1; done\n"
        f"  [ $i -ge {WAIT_S * 10} ] && echo 'waited out' >> '{log}';;\n"
        "esac\n"
        f"exec {shutil.which('git')} \"$@\"\n")
    script.chmod(0o755)


async def test_a_dependent_starts_while_its_dependency_s_worktree_is_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A"), task("B", "A"), verify=None))
    log = tmp_path / "held.log"
    holding_git(tmp_path / "bin", repo, log)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    agents = ScriptedAgents({("player", "A"): writes({"calc/a.py": "A = 1\n"}),
                             ("player", "B"): writes({"calc/b.py": "B = 1\n"}), "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.results["B"]["merged"], "B landed on A's work"
    assert log.read_text().split("\n")[0] == "started", "B started before A's worktree was removed"
