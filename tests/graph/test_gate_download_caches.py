"""The gate never reads a download cache an agent can write (issue 38 item 6): Go checks go.sum only when it
downloads, so a module an agent edited in the module cache it shares would be built by every later gate run.
Here a real `go` fetches a module from a proxy folder into the agents' module cache, the agent edits it, and the
gate, with a module cache of its own, still judges the module as go.sum has it. Real git, go and bwrap."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from orchestrator import sandbox
from tests.graph.harness import judged, plan, task

pytestmark = [pytest.mark.heavy,
              pytest.mark.skipif(shutil.which("go") is None, reason="go is installed by make install"),
              pytest.mark.skipif(not sandbox.available(), reason="the caches are apart inside the sandbox only")]

DEP_MOD = "module example.com/dep\n\ngo 1.19\n"
GO_SUM = ("example.com/dep v1.0.0 h1:eExJQBOds4A8DUWdDsQTrqZEcjogD3JW9Rm5QLY9AQ8=\n"
          "example.com/dep v1.0.0/go.mod h1:fGPp69Hit/toBUWE+Ldh2b+Bo3ABzILGe56XIcOE/Is=\n")
FILES = {"go.mod": "module example.com/calc\n\ngo 1.19\n\nrequire example.com/dep v1.0.0\n", "go.sum": GO_SUM,
         "calc.go": "package calc\n\nfunc Value() int { return 1 }\n",
         "calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestValue(t *testing.T) {\n"
                         "\tif Value() != 1 {\n\t\tt.Errorf(\"want 1, got %d\", Value())\n\t}\n}\n"}
BROKEN = "package calc\n\nimport \"example.com/dep\"\n\nfunc Value() int { return dep.Dep() }\n"


def module_proxy(folder: Path) -> Path:
    """A proxy folder serving example.com/dep v1.0.0, whose Dep() returns 2 (go.sum's hashes are of this zip)."""
    versions = folder / "example.com" / "dep" / "@v"
    versions.mkdir(parents=True)
    (versions / "list").write_text("v1.0.0\n")
    (versions / "v1.0.0.info").write_text(json.dumps({"Version": "v1.0.0", "Time": "2024-01-01T00:00:00Z"}))
    (versions / "v1.0.0.mod").write_text(DEP_MOD)
    with zipfile.ZipFile(versions / "v1.0.0.zip", "w") as archive:
        archive.writestr("example.com/dep@v1.0.0/go.mod", DEP_MOD)
        archive.writestr("example.com/dep@v1.0.0/dep.go", "package dep\n\nfunc Dep() int { return 2 }\n")
    return folder


def plant(repo: Path) -> Path:
    """What an agent can do in its own module cache: download the module (verified), then edit it there."""
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "agent"
    agents = sandbox.agent_env(worktree)
    done = subprocess.run(["go", "mod", "download", "example.com/dep"], cwd=repo, check=False, capture_output=True,
                          env={**os.environ, "GOMODCACHE": agents["GOMODCACHE"], "GOFLAGS": "-modcacherw"}, text=True)
    assert done.returncode == 0, done.stderr
    edited = Path(agents["GOMODCACHE"]) / "example.com" / "dep@v1.0.0" / "dep.go"
    edited.write_text("package dep\n\nfunc Dep() int { return 1 }\n")
    return edited


async def test_a_module_an_agent_edited_in_its_module_cache_does_not_steer_the_gate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOPROXY", f"file://{module_proxy(tmp_path / 'proxy')}")
    monkeypatch.setenv("GOSUMDB", "off")
    repo = make_sample_repo(tmp_path / "repo", files=FILES, plan=plan(task("TASK-001"), verify="go test ./..."),
                            venv=False)
    assert plant(repo).is_file()
    result = await judged(repo, {"calc.go": BROKEN}, "go test ./...")
    assert not result["passed"], result["summary"]
    assert "example.com/calc.TestValue" in (result["failing"] or []), result["summary"]
