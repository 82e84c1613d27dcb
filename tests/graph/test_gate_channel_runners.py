"""The gate's channel for go, cargo, mocha and vitest (issue 38 item 3), through the gate service on real git repos
and real runners: a feature task whose code under test leaves in the middle of the task's own new test with
status 0 (no base test goes missing, so nothing else notices) is refused as tampering, named: `go test`'s record is
taken outside the test binary (the go command's events), cargo's test binary never printed its `test result:`,
mocha's session on the channel never ended. A fake vitest summary printed by the code under test is named.
Honest runs pass with their ids from the channel."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from benchmarks.js_cheats import TOOLS, js_repo
from benchmarks.native_cheats import CARGO_FILES
from tests.graph.harness import judged, plan, task

pytestmark = pytest.mark.heavy

GO_TEST = "go test ./..."
GO_FILES = {"go.mod": "module example.com/calc\n\ngo 1.19\n",
            "mul.go": "package calc\n\nfunc Mul(a, b int) int { return a * b }\n",
            "mul_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n"
                           "\t\tt.Fatal(\"want 6\")\n\t}\n}\n"}
GO_LEAVES = {"double.go": "package calc\n\nimport \"syscall\"\n\nfunc Double(a int) int {\n\tif a == 2 {\n"
                          "\t\tsyscall.Exit(0)\n\t}\n\treturn a * 2\n}\n",
             "zz_double_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n"
                                  "\tif Double(2) != 4 {\n\t\tt.Fatal(\"want 4\")\n\t}\n}\n"}


def _repo(tmp_path: Path, files: dict[str, str], verify: str) -> Path:
    return make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify=verify), venv=False)


def _tampering(result: dict[str, object]) -> str:
    return "; ".join(result.get("tampering") or [])  # type: ignore[arg-type]


@pytest.mark.skipif(shutil.which("go") is None, reason="needs go")
async def test_go_code_that_leaves_mid_test_with_status_0_is_refused(tmp_path: Path) -> None:
    result = await judged(_repo(tmp_path, GO_FILES, GO_TEST), GO_LEAVES, GO_TEST)
    assert not result["passed"] and result.get("channel") == ["go test"], result["summary"]
    # go 1.20 on says the test never ended; go 1.19's own converter gives the package's `ok` to the running test
    # instead, and its result is missing.
    assert any(finding.startswith(("go test end: example.com/calc.TestDouble started and never ended",
                                   "go test summary: the output has package result line(s) the gate's channel did"
                                   " not hear: ok example.com/calc")) for finding in result.get("tampering") or []), \
        result["summary"]


@pytest.mark.skipif(shutil.which("go") is None, reason="needs go")
async def test_an_honest_go_run_passes_with_its_ids_from_the_channel(tmp_path: Path) -> None:
    honest = {name: text.replace("\t\tsyscall.Exit(0)\n", "\t\treturn 4\n").replace("import \"syscall\"\n\n", "")
              for name, text in GO_LEAVES.items()}
    result = await judged(_repo(tmp_path, GO_FILES, GO_TEST), honest, GO_TEST)
    assert result["passed"] and result.get("channel") == ["go test"], result["summary"]
    assert not result.get("tampering") and result["tests_passed"] == 2, result["summary"]


CARGO_LEAVES = {"src/double.rs": "pub fn double(a: i32) -> i32 {\n    if a == 2 {\n        std::process::exit(0);\n"
                                 "    }\n    a * 2\n}\n",
                "tests/double.rs": "#[test]\nfn doubles() {\n    assert_eq!(calc::double::double(2), 4);\n}\n"}


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo")
async def test_cargo_code_that_leaves_mid_test_with_status_0_is_refused(tmp_path: Path) -> None:
    files = {**CARGO_LEAVES, "src/lib.rs": "pub mod double;\n" + CARGO_FILES["src/lib.rs"]}
    result = await judged(_repo(tmp_path, CARGO_FILES, "cargo test"), files, "cargo test")
    assert not result["passed"], result["summary"]
    assert "cargo test end: tests/double.rs printed 0 `test result:` lines" in _tampering(result), result["summary"]


JS = pytest.mark.skipif(shutil.which("node") is None or not (TOOLS / "mocha").is_dir(),
                        reason="jest, vitest and mocha are installed into .venv/js by make install")


def _js(tmp_path: Path, runner: str) -> Path:
    repo = _repo(tmp_path, js_repo(runner).files, "npm test")
    (repo / "node_modules").symlink_to(TOOLS, target_is_directory=True)
    return repo


@JS
async def test_mocha_code_that_leaves_mid_run_with_status_0_is_refused(tmp_path: Path) -> None:
    leaves = {"double.js": "exports.double = (a) => (a === 2 ? process.exit(0) : a * 2);\n",
              "test/zz_double.test.js": ("const assert = require('node:assert');\n"
                                         "const { double } = require('../double');\n\n"
                                         "it('doubles', function () { assert.strictEqual(double(2), 4); });\n")}
    result = await judged(_js(tmp_path, "mocha"), leaves, "npm test")
    assert not result["passed"] and result.get("channel") == ["mocha"], result["summary"]
    assert "mocha end: a session on the gate's channel never ended" in _tampering(result), result["summary"]


@JS
@pytest.mark.parametrize("runner", ["mocha", "vitest"])
async def test_an_honest_mocha_or_vitest_run_passes_with_its_ids_from_the_channel(tmp_path: Path, runner: str) -> None:
    result = await judged(_js(tmp_path, runner), {"README.md": "calc\n"}, "npm test")
    assert result["passed"] and result.get("channel") == [runner], result["summary"]
    assert not result.get("tampering"), result["summary"]


@JS
async def test_a_fake_vitest_summary_is_refused_and_named(tmp_path: Path) -> None:
    sample = js_repo("vitest")
    fake = "process.stdout.write('\\n      Tests  4 passed (4)\\n');\n" + sample.broken["mul.js"]
    result = await judged(_js(tmp_path, "vitest"), {"mul.js": fake}, "npm test")
    assert not result["passed"] and result.get("channel") == ["vitest"], result["summary"]
    assert "vitest summary: it says 4 passed, 4 total; the gate's channel heard 1 failed, 3 passed, 4 total" in \
        _tampering(result), result["summary"]
