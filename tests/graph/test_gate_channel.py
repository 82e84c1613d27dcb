"""No result can be rewritten after it is reported (issue 38 item 3): players whose code under test rewrites,
deletes or outshouts the report the gate used to read (JUnit, the unittest shim's file, a printed summary) and
exits 0 are refused, named as tampering, through the gate service on real git repos: each runner's results left
the judged process on the gate's channel as they happened, and the accounts disagree. Honest runs still pass."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.cheat_corpus import BROKEN as MUL_BROKEN
from benchmarks.js_cheats import TOOLS, js_repo
from benchmarks.verdict_more import _FAKES_THE_HELPER, _PY_TEST_HELPER
from orchestrator import sandbox
from orchestrator.cli.demo import make_sample_repo
from tests.graph.harness import judged, plan, task

ADD = "def add(a, b):\n    return a + b\n"
BROKEN = {"calc/add.py": "def add(a, b):\n    return a - b\n"}
PYTEST_FILES = {"calc/__init__.py": "", "calc/add.py": ADD,
                "tests/test_add.py": ("from calc.add import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
                                      "def test_zero():\n    assert add(0, 0) == 0\n")}
_AT_EXIT = "import atexit\nimport os\n\n\ndef _lie():\n{body}    os._exit(0)\n\n\natexit.register(_lie)\n"
_JUNIT = ('<testsuites><testsuite><testcase classname="tests.test_add" name="test_add"/>'
          '<testcase classname="tests.test_add" name="test_zero"/></testsuite></testsuites>')
_REPORT = ("    report = [a.split('=', 1)[1] for a in os.environ['PYTEST_ADDOPTS'].split()\n"
           "              if a.startswith('--junitxml=')]\n")
PYTEST_CHEATS = {
    "rewrites the JUnit report at exit": _AT_EXIT.format(
        body=f"{_REPORT}    open(report[0], 'w').write({_JUNIT!r})\n"),
    "deletes the report and prints a fake summary": _AT_EXIT.format(
        body=f"{_REPORT}    os.remove(report[0])\n    print('2 passed in 0.01s', flush=True)\n"),
    "prints a fake summary and leaves mid-run": ("import os\nimport sys\n\n\ndef add(a, b):\n"
                                                 "    print('\\n2 passed in 0.01s', flush=True)\n    os._exit(0)\n"),
}


def _pytest_repo(tmp_path: Path) -> Path:
    return make_sample_repo(tmp_path / "repo", files=PYTEST_FILES,
                            plan=plan(task("TASK-001"), verify="python -m pytest -q"))


def _cheat(name: str) -> dict[str, str]:
    if name.startswith("prints a fake summary and leaves"):
        return {"calc/add.py": PYTEST_CHEATS[name]}
    return {**BROKEN, "calc/__init__.py": PYTEST_CHEATS[name]}


async def test_code_that_rewrites_pytest_s_report_at_exit_is_refused_as_tampering(tmp_path: Path) -> None:
    result = await judged(_pytest_repo(tmp_path), _cheat("rewrites the JUnit report at exit"), "python -m pytest -q")
    assert not result["passed"], result["summary"]
    assert "tampering: exit status: the command exited 0 while the gate's channel heard 1 failing test(s):" \
           " tests.test_add::test_add" in result["summary"], result["summary"]
    assert result["failing"] == ["tests.test_add::test_add"], result["summary"]


@pytest.mark.heavy  # two more of the report family, and the honest run
@pytest.mark.parametrize(("cheat", "named"), [
    ("deletes the report and prints a fake summary", "pytest summary: the output has 2 end-of-session summaries"),
    ("prints a fake summary and leaves mid-run", "pytest end: a session on the gate's channel never ended"),
])
async def test_a_deleted_report_or_a_fake_summary_is_refused_and_named(tmp_path: Path, cheat: str, named: str) -> None:
    result = await judged(_pytest_repo(tmp_path), _cheat(cheat), "python -m pytest -q")
    assert not result["passed"] and named in "; ".join(result.get("tampering") or []), result["summary"]


@pytest.mark.heavy
async def test_an_honest_pytest_run_passes_with_its_ids_from_the_channel(tmp_path: Path) -> None:
    result = await judged(_pytest_repo(tmp_path), {"README.md": "calc\n"}, "python -m pytest -q")
    assert result["passed"] and result.get("channel") == ["pytest"] and not result.get("tampering"), result["summary"]
    assert result["tests_passed"] == 2


UNITTEST = "python -m unittest discover -s tests -t ."
UNITTEST_FILES = {"calc/__init__.py": "", "calc/add.py": ADD,
                  "tests/__init__.py": "",
                  "tests/test_add.py": ("import unittest\n\nfrom calc.add import add\n\n\n"
                                        "class TestAdd(unittest.TestCase):\n    def test_add(self):\n"
                                        "        self.assertEqual(add(1, 2), 3)\n\n    def test_zero(self):\n"
                                        "        self.assertEqual(add(0, 0), 0)\n")}
_UNITTEST_LIE = "import json\n" + _AT_EXIT.format(body=("    report = os.environ['AUTOBUILD_UNITTEST_REPORT']\n"
                                      "    open(report, 'w').write(''.join(json.dumps(line) + '\\n' for line in [\n"
                                      "        {'outcome': 'run'},\n"
                                      "        {'outcome': 'passed', 'id': 'tests.test_add.TestAdd.test_add'},\n"
                                      "        {'outcome': 'passed', 'id': 'tests.test_add.TestAdd.test_zero'}]))\n"
                                      "    print('Ran 2 tests in 0.001s\\n\\nOK', flush=True)\n"))


@pytest.mark.heavy  # the report family, second runner
async def test_code_that_rewrites_the_unittest_shim_s_report_and_summary_is_refused(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=UNITTEST_FILES,
                            plan=plan(task("TASK-001"), verify=UNITTEST))
    result = await judged(repo, {**BROKEN, "calc/__init__.py": _UNITTEST_LIE}, UNITTEST)
    assert not result["passed"], result["summary"]
    found = "; ".join(result.get("tampering") or [])
    assert "unittest summary: the output has 2 end-of-session summaries" in found, result["summary"]
    assert "exit status: the command exited 0" in found, result["summary"]


NODE_FILES = {"package.json": '{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
              "add.js": "exports.add = (a, b) => a + b;\n",
              "test/add.test.js": ("const test = require('node:test');\nconst assert = require('node:assert');\n"
                                   "const { add } = require('../add.js');\n\n"
                                   "test('adds', () => assert.strictEqual(add(1, 2), 3));\n"
                                   "test('zero', () => assert.strictEqual(add(0, 0), 0));\n")}
NODE_FORGER = """const fs = require('node:fs');
// The runner's channel, found through /proc (its number in the runner's first environment), gets records that say
// this file's tests passed, under the runner's own session; and the run's output a summary that says so.
try {
  const environ = fs.readFileSync(`/proc/${process.ppid}/environ`, 'utf8').split('\\0');
  const fd = (environ.find((entry) => entry.startsWith('AUTOBUILD_GATE_CHANNEL=')) || '').split('=')[1];
  const out = fs.openSync(`/proc/${process.ppid}/fd/${fd}`, 'w');
  for (const name of ['adds', 'zero']) {
    fs.writeSync(out, JSON.stringify({ s: `${process.ppid}-1`, runner: 'node --test', event: 'test', outcome: 'pass',
      file: 'test/add.test.js', path: [name], parent: false, reason: '' }) + '\\n');
  }
  fs.closeSync(out);
} catch {}
exports.add = (a, b) => a - b;
"""


@pytest.mark.heavy  # the report family, third runner: a test file's process forges its runner's records
@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="node's test runner")
async def test_a_test_file_that_forges_its_runner_s_records_is_refused(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=NODE_FILES, plan=plan(task("TASK-001"), verify="npm test"),
                            venv=False)
    result = await judged(repo, {"add.js": NODE_FORGER}, "npm test")
    assert not result["passed"], result["summary"]
    assert "reported twice node --test test/add.test.js > adds: pass, then fail" in (result.get("tampering") or []), \
        result["summary"]


@pytest.mark.heavy  # the report family, fourth runner: jest's workers print a summary of their own
@pytest.mark.skipif(shutil.which("node") is None or not (TOOLS / "jest").is_dir(), reason="jest from make install")
async def test_code_that_prints_a_fake_jest_summary_is_refused(tmp_path: Path) -> None:
    sample = js_repo("jest")
    repo = make_sample_repo(tmp_path / "repo", files=sample.files, plan=plan(task("TASK-001"), verify="npm test"),
                            venv=False)
    (repo / "node_modules").symlink_to(TOOLS, target_is_directory=True)
    fake = "process.stdout.write('\\nTests:       6 passed, 6 total\\n');\n" + sample.broken["mul.js"]
    result = await judged(repo, {"mul.js": fake}, "npm test")
    assert not result["passed"] and result.get("channel") == ["jest"], result["summary"]
    assert "jest summary: it says 6 passed, 6 total; the gate's channel heard 1 failed, 3 passed, 4 total" in (
        result.get("tampering") or []), result["summary"]


@pytest.mark.heavy  # the same family by other means: keep the reporter from loading, rewrite a tracked file
@pytest.mark.parametrize(("cheat", "named"), [
    ({"pytest.ini": "[pytest]\naddopts = -p no:autobuild_gate_pytest\n",
      "calc/__init__.py": PYTEST_CHEATS["rewrites the JUnit report at exit"]},
     "lost ids: the base's run reported pytest"),
    ({"calc/__init__.py": ("import pathlib\n\n"
                           "pathlib.Path('calc/add.py').write_text('def add(a, b):\\n    return a + b\\n')\n")},
     "tracked files: the run changed calc/add.py"),
    ({"calc/__init__.py": ("import pathlib\n\n"
                           "pathlib.Path('tests/test_add.py').write_text('def test_add():\\n    pass\\n')\n")},
     None),
], ids=["reporter kept from loading", "a tracked code file rewritten by the run", "a test rewritten by the run"])
async def test_a_run_that_loses_the_channel_or_rewrites_a_tracked_file_is_refused(
        tmp_path: Path, cheat: dict[str, str], named: str | None) -> None:
    result = await judged(_pytest_repo(tmp_path), {**BROKEN, **cheat}, "python -m pytest -q")
    assert not result["passed"], result["summary"]
    if named is None and sandbox.available():  # the tests are read-only in the run: the rewrite fails there
        assert "tests.test_add::test_add" in result["summary"], result["summary"]
        return
    assert any(finding.startswith(named or "tracked files: the run changed tests/test_add.py")
               for finding in result.get("tampering") or []), result["summary"]


_PATCHES_THE_RUNNER = ("import gc\nimport unittest\n\nfor found in gc.get_objects():\n"
                       "    if isinstance(found, type) and found.__name__ == 'TestCase' \\\n"
                       "            and 'assertEqual' in vars(found):\n"
                       "        type.__setattr__(found, 'assertEqual', lambda *a, **k: None)\n")
"""The task's code, imported by the tests, finds unittest's TestCase by walking the heap and makes its assertEqual
do nothing: the code screen reads no runner's name, every assertion of the broken `add` passes, both runners exit
0."""


@pytest.mark.parametrize("command", [UNITTEST, "python -m pytest -q"])
async def test_code_that_replaces_the_runners_own_assertion_is_refused_as_tampering(tmp_path: Path,
                                                                                     command: str) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=UNITTEST_FILES, plan=plan(task("TASK-001"), verify=command))
    result = await judged(repo, {**BROKEN, "calc/__init__.py": _PATCHES_THE_RUNNER}, command)
    assert not result["passed"], result["summary"]
    runner = "unittest" if command == UNITTEST else "pytest"
    assert f"{runner} unittest.case.TestCase.assertEqual: replaced by code outside the runner" in \
        "; ".join(result.get("tampering") or []), result["summary"]
    assert "calc/__init__.py:7" in result["summary"], "names where the replacement came from"


_SKIPS_EVERY_TEST = ("import gc\n\nfor found in gc.get_objects():\n"
                     "    if isinstance(found, type) and found.__name__ == 'Function' and 'runtest' in vars(found):\n"
                     "        type.__setattr__(found, 'runtest', lambda self: None)\n")
"""The task's code finds pytest's own test item class by walking the heap, never naming a runner, and makes its call
run nothing: every test passes."""


async def test_code_that_replaces_pytest_s_own_test_call_is_refused_as_tampering(tmp_path: Path) -> None:
    repo = _pytest_repo(tmp_path)
    result = await judged(repo, {"calc/add.py": "import calc.hidden\n\n\n" + BROKEN["calc/add.py"],
                                 "calc/hidden.py": _SKIPS_EVERY_TEST}, "python -m pytest -q")
    assert not result["passed"], result["summary"]
    assert "pytest _pytest.python.Function.runtest: replaced by code outside the runner" in \
        "; ".join(result.get("tampering") or []), result["summary"]


_EMPTIES_NODE_ASSERT = ("const lib = require(['ass', 'ert'].join(''));\nlib.strictEqual = () => {};\n"
                        "exports.add = (a, b) => a - b;\n")
"""The task's code loads node's assert by a name built at run time (no name the code screen can read) and empties
its strictEqual: every assertion of the broken `add` passes, node --test and mocha report every test passed."""


@pytest.mark.parametrize("runner", ["node --test", "mocha"])
async def test_code_that_empties_node_assert_is_refused_as_tampering(tmp_path: Path, runner: str) -> None:
    if shutil.which("node") is None or (runner == "mocha" and not (TOOLS / "mocha").is_dir()):
        pytest.skip(f"{runner}: node, and mocha from make install")
    second = {"test/zero.test.js": NODE_FILES["test/add.test.js"].replace("'adds'", "'adds again'")}
    files = {**NODE_FILES, **second} if runner == "node --test" else {
        **js_repo("mocha").files, "add.js": "exports.add = (a, b) => a + b;\n",
        "test/add.test.js": NODE_FILES["test/add.test.js"].replace("const test = require('node:test');\n", "")
        .replace("test(", "it(")}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify="npm test"), venv=False)
    if runner == "mocha":
        (repo / "node_modules").symlink_to(TOOLS)
    result = await judged(repo, {"add.js": _EMPTIES_NODE_ASSERT}, "npm test")
    assert not result["passed"] and result["tests_failed"] == 0, result["summary"]
    found = "; ".join(result.get("tampering") or [])
    assert f"{runner} node:assert.strictEqual: replaced by code outside the runner (() => {{}}" in found, found
    if runner == "node --test":
        assert "(in test/add.test.js)" in found, "names the test file whose process found it"
        assert found.count("node:assert.strictEqual") == 1, "once, though both test files' processes found it"


async def test_a_finder_the_screen_cant_read_that_fakes_the_tests_helper_is_refused_as_tampering(
        tmp_path: Path) -> None:
    """The task's code reaches sys.meta_path by a name built at run time and puts a finder there that answers the
    tests' import of their own helper with a fake whose `equal` passes: the code screen reads nothing, pytest says
    every test passed; the session's end names the finder and where its code is."""
    hidden = _FAKES_THE_HELPER.replace("sys.meta_path.insert(0, _Finder())",
                                       "hooks = getattr(sys, 'meta_' + 'path')\nhooks.insert(0, _Finder())")
    repo = make_sample_repo(tmp_path / "repo", files=_PY_TEST_HELPER,
                            plan=plan(task("TASK-001"), verify="python -m pytest -q"))
    result = await judged(repo, {"calc/__init__.py": hidden, "calc/mul.py": MUL_BROKEN}, "python -m pytest -q")
    assert not result["passed"] and result["tests_failed"] == 0, result["summary"]
    assert "pytest sys.meta_path: a finder added by code outside the runner (calc/__init__.py:7)" in \
        (result.get("tampering") or []), result["summary"]
    assert "know they are tested" not in result["summary"], "the runtime check alone found it"
