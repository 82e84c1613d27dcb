"""mocha in parallel mode and compound commands keep every passing test's id (issue 31): mocha's workers report
to the main process, where the gate's reporter replaces the user's (`--reporter dot`, a .mocharc's); a command
that runs a script after a lint step or after a `cd` runs it under the same instrumentation. A runner started
through its API gets no reporter: its passing tests are accounted by count, and a drop fails the gate naming
the runner. Real mocha (installed by `make install` into .venv/js), real git, through the gate service."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.js_cheats import TOOLS, cheats, js_repo
from orchestrator.cli.demo import make_sample_repo
from orchestrator.gate.report import judged_by
from tests.graph.harness import judged, plan, task

pytestmark = [pytest.mark.heavy,
              pytest.mark.skipif(shutil.which("node") is None or not (TOOLS / "mocha").is_dir(),
                                 reason="mocha is installed into .venv/js by make install")]

SAMPLE = js_repo("mocha")
LINT = {"lint": "node -e 0"}
API = ("const found = require('mocha');\nconst Mocha = found.default || found;\nconst mocha = new Mocha();\n"
       "for (const file of ['test/mul.test.js', 'test/other.test.js']) mocha.addFile(file);\n"
       "mocha.run((failures) => { process.exitCode = failures ? 1 : 0; });\n")
COMMANDS = {
    "mocha --parallel, the user's reporter and its options": ("", "npx mocha --parallel --reporter dot"
                                                                  " --reporter-option maxDiffSize=1", {}),
    "a .mocharc in parallel mode with its own reporter": ("", "npm test", {
        ".mocharc.json": '{"parallel": true, "jobs": 2, "reporter": "dot"}'}),
    "a lint step before npm test": ("", "npm run lint && npm test", {}),
    "npm test after a cd": ("web/", "cd web && npm test", {}),
}


def mocha_repo(tmp_path: Path, folder: str, command: str, extra: dict[str, str]) -> Path:
    files = dict(SAMPLE.files)
    scripts = json.loads(files["package.json"])
    scripts["scripts"] |= LINT
    files["package.json"] = json.dumps(scripts)
    repo = make_sample_repo(tmp_path / "repo", files={f"{folder}{path}": text for path, text in
                                                      {**files, **extra}.items()},
                            plan=plan(task("TASK-001"), verify=command), venv=False)
    # At the top, where the worktree gets its own: node and npm find it walking up from a package's folder.
    (repo / "node_modules").symlink_to(TOOLS, target_is_directory=True)
    return repo


@pytest.mark.parametrize("name", list(COMMANDS))
async def test_passing_ids_are_recorded_in_parallel_mode_and_compound_commands(tmp_path: Path, name: str) -> None:
    folder, command, extra = COMMANDS[name]
    repo = mocha_repo(tmp_path, folder, command, extra)
    deleted, named = cheats("mocha")["test deleted"]
    changed = {f"{folder}{path}": text for path, text in {**SAMPLE.broken, **deleted}.items()}
    result = await judged(repo, changed, verify=command)
    assert result["command"] == command
    assert result["runner"] == "mocha" and result["judged_by"] == "test ids", result["summary"]
    assert f"{folder}{named}" in result["summary"] and "fewer passing" not in result["summary"], result["summary"]
    assert not result["passed"]


async def test_a_runner_started_through_its_api_is_accounted_by_count_and_a_drop_names_it(tmp_path: Path) -> None:
    """No reporter reaches mocha started by a script of the repo's own: `validate` says so, and a player that
    deletes a test is refused by the drop in mocha's count of passes."""
    manifest = json.dumps({"name": "calc", "version": "1.0.0", "scripts": {"test": "node scripts/run.js"}})
    repo = mocha_repo(tmp_path, "", "npm test", {"scripts/run.js": API, "package.json": manifest})
    said = judged_by("npm test", repo)
    assert "passing tests accounted by count (scripts/run.js starts mocha through its API" in said, said
    deleted, _ = cheats("mocha")["test deleted"]
    result = await judged(repo, {**SAMPLE.broken, **deleted}, verify="npm test")
    assert result["runner"] == "mocha", result["output"]
    assert "mocha: 1 fewer passing" in result["summary"] and "accounted by count" in result["output"], result["output"]
    assert not result["passed"]
