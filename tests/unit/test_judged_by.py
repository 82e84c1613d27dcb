"""What `validate` says about how a compound command's runs are judged (issue 31): the scripts it runs are read
where they run (`cd web && npm test` reads web/package.json; `npm run unit` its `unit` script), so a runner started
through another program's API is said to be "accounted by count" and a JS runner the gate's reporter reaches is
said to be judged by test id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.gate.report import judged_by


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
