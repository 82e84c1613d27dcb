"""A monorepo package's command comes from the base, as the top's does (issue 31 item 3): a task that narrows a
package's package.json `test` script doesn't change what runs for that package. Real git and the real `node --test`
(offline), through the gate service."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.cheat_corpus import NODE_BROKEN, NODE_FILES
from orchestrator.cli.demo import make_sample_repo
from tests.graph.harness import judged, plan, task

ZERO = "const test = require('node:test');\nconst assert = require('node:assert');\ntest('ok', () => {});\n"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is installed by make install")
async def test_a_packages_narrowed_test_script_does_not_change_what_runs(tmp_path: Path) -> None:
    package = {**NODE_FILES, "test/zero.test.js": ZERO}
    files = {f"{name}/{path}": text for name in ("api", "web") for path, text in package.items()}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify=None), venv=False)
    narrowed = NODE_FILES["package.json"].replace('"node --test"', '"node --test test/zero.test.js"')
    result = await judged(repo, {"web/mul.js": NODE_BROKEN, "web/package.json": narrowed})
    assert "web::test/mul.test.js > mul" in (result["failing"] or []), result["summary"]
    assert "web: `npm test`" in result["summary"], result["summary"]
    assert "run with package.json's `test` script as on the base" in result["summary"], result["summary"]
    assert not result["passed"]
