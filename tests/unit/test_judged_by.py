"""What `validate` says about how a compound command's runs are judged (issue 31): the scripts it runs are read
where they run (`cd web && npm test` reads web/package.json; `npm run unit` its `unit` script), so a runner started
through another program's API is said to be "accounted by count" and a JS runner the gate's reporter reaches is
said to be judged by test id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from orchestrator.gate.report import judged_by
from tests.cli_in_process import cli_in_process


def package(folder: Path, scripts: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({"scripts": scripts}))


@pytest.mark.parametrize("command", ["cd web && npm test", "(cd web && npm test)", "npm --prefix web test",
                                     "npm run lint && cd web && npm run unit", "cd web; yarn unit"])
def test_a_compound_command_reads_the_scripts_it_runs_where_they_run(tmp_path: Path, command: str) -> None:
    package(tmp_path, {"test": "mocha", "lint": "node -e 1"})
    package(tmp_path / "web", {"test": "craco test", "unit": "craco test --watchAll=false"})
    said = judged_by(command, tmp_path)
    assert "passing tests accounted by count (craco starts its runner through an API" in said, said


def test_a_script_other_than_test_is_read_for_its_runner(tmp_path: Path) -> None:
    package(tmp_path, {"test": "node --test", "lint": "eslint .", "unit": "mocha --parallel"})
    said = judged_by("npm run lint && npm run unit", tmp_path)
    assert "by test id: mocha, passes included" in said and "accounted by count" not in said, said
    package(tmp_path / "web", {"test": "jest --ci"})
    assert "by test id: jest" in judged_by("cd web && npm test", tmp_path)


def test_a_program_of_the_repos_that_starts_a_runner_through_its_api_is_accounted_by_count(tmp_path: Path) -> None:
    package(tmp_path, {"test": "node --unhandled-rejections=strict scripts/test.js"})
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "test.js").write_text("const jest = require('jest');\njest.run(process.argv.slice(2));\n")
    said = judged_by("npm test", tmp_path)
    assert "accounted by count (scripts/test.js starts jest through its API" in said, said
    (tmp_path / "scripts" / "test.js").write_text("console.log('no runner here');\n")
    assert "accounted by count" not in judged_by("npm test", tmp_path)


def test_validate_and_dry_run_say_in_one_line_that_an_exit_status_gate_cannot_verify(tmp_path: Path) -> None:
    """Issue 38 item 3: a command no runner we read reports from (a script the user named) can't verify a test;
    before the run, `validate` and `run --dry-run` say its approvals will be approved-unverified, in one line."""
    files = {"tests/run.sh": "echo ok\n", "lib.c": "int x;\n"}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan={
        "id": "FEAT-001", "name": "F", "verify": "sh tests/run.sh",
        "tasks": [{"id": "TASK-001", "name": "T", "complexity": 2}]}, venv=False)
    said = [cli_in_process(tmp_path, *args, "--repo", str(repo)).stdout for args in (
        ("validate", "FEAT-001"), ("run", "FEAT-001", "--dry-run"))]
    for text in said:
        lines = [line for line in text.splitlines() if "approved-unverified" in line]
        assert len(lines) == 1 and "judged by exit status" in lines[0], text
        assert "cannot verify a test" in lines[0] and "its approvals are approved-unverified" in lines[0]
    shown = json.loads(cli_in_process(tmp_path, "validate", "FEAT-001", "--json", "--repo", str(repo)).stdout)
    assert "approved-unverified" in shown["gate"]["judged_by"]
    assert "approved-unverified" not in judged_by("python -m unittest", repo), "a runner we read verifies"
    assert not (repo / ".autobuild" / "worktrees").exists(), "nothing ran"
