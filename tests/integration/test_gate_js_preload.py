"""The gate's NODE_OPTIONS preload adds jest's, vitest's and mocha's reporter options when one of them starts, and
nothing otherwise: stand-in runners on disk (`node_modules/<runner>/...` printing the arguments they got), run
with the gate's instrumented environment by a real node. Real jest, vitest and mocha: tests/graph/test_js_runners.py."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from orchestrator.gate.observe.instrument import instrument
from orchestrator.processes import run_async

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is installed by make install")

SAYS_ARGS = "console.log('ARGS ' + JSON.stringify(process.argv.slice(2)));\n"
# mocha's bin starts mocha again as a child when given node flags: the child must not get a second reporter.
STARTS_ITSELF = SAYS_ARGS + ("if (!process.env.CHILD) require('child_process').spawnSync(process.execPath,"
                             " [__filename, ...process.argv.slice(2)], {stdio: 'inherit',"
                             " env: {...process.env, CHILD: '1'}});\n")


def stand_in(root: Path, relative: str, body: str = SAYS_ARGS) -> Path:
    path = root / "node_modules" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


async def arguments(root: Path, script: Path, *given: str, only: str = "") -> list[list[str]]:
    """The arguments each process of `script` saw, run under the gate's instrumentation (`only`: the overlay's
    restriction to test files, one a line)."""
    env, reports = await instrument(dict(os.environ, PYTHONPATH="", AUTOBUILD_JS_ONLY=only), root / "scratch", root)
    done = await run_async(["node", str(script), *given], root, timeout=60, env=env)
    assert done.ok, done.stderr
    assert env["AUTOBUILD_JS_REPORTS"] == str(reports.js) and reports.js.is_dir()
    return [json.loads(line[5:]) for line in done.stdout.splitlines() if line.startswith("ARGS ")]


async def test_jest_gets_the_gates_results_processor_before_a_bare_double_dash(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir()
    jest = stand_in(tmp_path, "jest/bin/jest.js")
    [seen] = await arguments(tmp_path, jest, "--ci", "--", "math")
    assert seen[:2] == ["--ci", "--testResultsProcessor"] and seen[2].endswith("autobuild_jest_results.cjs")
    assert seen[3:] == ["--", "math"], "after `--` jest reads file patterns: our option goes before it"


async def test_vitest_keeps_its_default_output_and_writes_its_json_report_into_the_gates_folder(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir()
    [seen] = await arguments(tmp_path, stand_in(tmp_path, "vitest/vitest.mjs"), "run")
    assert seen[:3] == ["run", "--reporter=default", "--reporter=json"]
    assert seen[3].startswith(f"--outputFile.json={tmp_path / 'scratch' / 'js'}/vitest-")


async def test_mocha_gets_one_reporter_also_when_it_starts_itself_again(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir()
    parent, child = await arguments(tmp_path, stand_in(tmp_path, "mocha/bin/mocha.js", STARTS_ITSELF), "--exit")
    assert parent == child and parent.count("--reporter") == 1
    assert parent[-1].endswith("autobuild_mocha_reporter.cjs")


async def test_the_overlays_restricted_run_names_its_test_files_to_jest_and_vitest_not_mocha(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir()
    only = "test/a.test.js\ntest/b.test.ts"
    [jest] = await arguments(tmp_path, stand_in(tmp_path, "jest/bin/jest.js"), "--ci", only=only)
    assert jest[-3:] == ["--runTestsByPath", "test/a.test.js", "test/b.test.ts"]
    [vitest] = await arguments(tmp_path, stand_in(tmp_path, "vitest/vitest.mjs"), "run", only=only)
    assert vitest[-2:] == ["test/a.test.js", "test/b.test.ts"]
    [mocha] = await arguments(tmp_path, stand_in(tmp_path, "mocha/bin/mocha.js"), only=only)
    assert "test/a.test.js" not in mocha, "mocha adds positional files to its config's `spec`: it runs everything"


async def test_another_node_program_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir()
    script = tmp_path / "tool.js"
    script.write_text(SAYS_ARGS)
    assert await arguments(tmp_path, script, "a", "b") == [["a", "b"]]
