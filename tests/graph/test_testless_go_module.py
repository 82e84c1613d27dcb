"""A nested Go module with no test file of its own (a module of tools, pinned by a build-tagged `tools.go`) is not
gated: `go test ./...` there tests nothing and, offline, can't fetch its requirements, so the base's gate refused
the whole run. Real git and the real `go test`, with no module proxy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.cli.demo import make_sample_repo
from tests.graph.harness import judged, plan, task
from tests.graph.test_native_gates import TOP

pytestmark = [pytest.mark.heavy,
              pytest.mark.skipif(shutil.which("go") is None, reason="go is installed by make install")]

TOOLS = {"tools/go.mod": "module example.com/tools\n\ngo 1.19\n\nrequire golang.org/x/tools v0.1.12\n",
         "tools/tools.go": "//go:build tools\n\npackage tools\n\nimport _ \"golang.org/x/tools/cmd/stringer\"\n"}


async def test_an_offline_run_is_not_blocked_by_a_go_module_with_no_tests(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOPROXY", "off")
    repo = make_sample_repo(tmp_path / "repo", files={**TOP, **TOOLS, "Makefile": "test:\n\tgo test ./...\n"},
                            plan=plan(task("TASK-001"), verify=None), venv=False)
    good = await judged(repo, {"top.go": "package top\n\nfunc One() int { return 1 }\n\nfunc Two() int { return 2 }\n"})
    assert good["passed"], good["summary"]
    broken = await judged(repo, {"top.go": "package top\n\nfunc One() int { return 2 }\n"})
    assert not broken["passed"] and "failing: example.com/top.TestOne" in broken["summary"], broken["summary"]
