"""Expectation data anywhere (issue 38 item 7): test folders at any depth hold test data, and a file a base test
read (recorded by the gate's pytest plugin when a test or test-support file opened it) is that test's data. The
recorder is driven here as Python's audit hook drives it, from code compiled under the file names it judges."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from orchestrator.facts import Acceptance, GateResult
from orchestrator.gate.observe.instrument import SHIM
from orchestrator.gate.observe.reads import data_read, in_repo, pytest_reads
from orchestrator.gate.spec.accounting import TreeDiff, accept, account, unaccepted
from orchestrator.gate.spec.test_files import is_collected_python, is_test_data, is_test_file


def _shim() -> ModuleType:
    spec = importlib.util.spec_from_file_location("autobuild_gate_reads", SHIM / "autobuild_gate_reads.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


READS = _shim()


def test_test_folders_hold_data_at_any_depth() -> None:
    for path in ("src/pkg/tests/data/expected.json", "packages/foo/__tests__/fixtures/x.json", "pkg/test/out.txt",
                 "lib/testdata/case.golden", "web/src/snapshots/a.txt", "tests/misc/nested.txt"):
        assert is_test_data(path), path
    # A module in a nested test folder is test code (a support module, or collected): not data.
    assert is_test_file("src/pkg/tests/helpers.py") and not is_test_data("src/pkg/tests/helpers.py")
    assert not is_collected_python("src/pkg/tests/helpers.py") and is_collected_python("src/pkg/tests/test_x.py")
    assert is_test_file("packages/foo/test/util.js") and not is_test_data("packages/foo/test/util.js")
    # A product's own modules and resources go by other names.
    for path in ("src/pkg/data/table.json", "pkg/templates/page.html", "docs/tests.md", "src/testing.py",
                 "pkg/contest/rules.txt", "latest/notes.txt", "testing.js"):
        assert not is_test_file(path), path


def _caller(filename: str, recorder: Any, path: str, flags: int = os.O_RDONLY) -> None:
    """`open(path)` as code in `filename` makes it: the audit event, seen by the recorder from that frame."""
    code = compile("def opened(recorder, path, flags):\n    recorder.audit('open', (path, 'r', flags))\n",
                   filename, "exec")
    scope: dict[str, Any] = {}
    exec(code, scope)  # code of our own, compiled under the file name the recorder judges
    scope["opened"](recorder, path, flags)


def _through(filename: str, inner: str, recorder: Any, path: str) -> None:
    """Code in `filename` calling code in `inner` that opens `path` (a library's read_text, the code under test)."""
    code = compile("def outer(call, recorder, path):\n    call(recorder, path)\n", filename, "exec")
    scope: dict[str, Any] = {}
    exec(code, scope)
    scope["outer"](lambda r, p: _caller(inner, r, p), recorder, path)


def test_a_file_a_test_opened_is_its_data_not_one_the_code_or_an_import_opened(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "golden").mkdir()
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    for name in ("out.txt", "in.txt", "written.txt", "module.txt"):
        (root / "golden" / name).write_text("x")
    recorder = READS.ReadsRecorder(str(root), str(tmp_path / "reads"))
    stdlib = str(tmp_path / "stdlib") + os.sep
    recorder.skipped = (*recorder.skipped, stdlib, __file__)  # this module's helpers stand for the interpreter
    test_file, code_file = str(root / "tests" / "test_x.py"), str(root / "pkg" / "mul.py")
    recorder.current = "tests.test_x::test_golden"
    _through(test_file, stdlib + "pathlib.py", recorder, str(root / "golden" / "out.txt"))  # Path.read_text()
    _through(test_file, code_file, recorder, str(root / "pkg" / "config.txt"))  # the code's own resource
    _through(test_file, code_file, recorder, str(root / "golden" / "in.txt"))  # an input the test handed it
    _caller(test_file, recorder, str(root / "golden" / "written.txt"), os.O_WRONLY | os.O_CREAT)  # a write
    _caller("<frozen importlib._bootstrap_external>", recorder, str(root / "golden" / "module.txt"))  # an import
    _caller(test_file, recorder, "/etc/hostname")  # outside the tree
    recorder.current = None
    _caller(str(root / "tests" / "conftest.py"), recorder, str(root / "golden" / "module.txt"))  # at import
    items = {"tests.test_x::test_golden": test_file, "tests.sub.test_y::test_y": str(root / "tests/sub/test_y.py"),
             "other.test_z::test_z": str(root / "other" / "test_z.py")}
    assert recorder.by_test(items) == {"tests.test_x::test_golden": ["golden/in.txt", "golden/module.txt",
                                                                     "golden/out.txt"],
                                       "tests.sub.test_y::test_y": ["golden/module.txt"]}


def test_the_callers_that_are_tests_or_their_support() -> None:
    root = "/repo"
    assert READS.test_side("/repo/tests/test_x.py", root) and READS.test_side("/repo/conftest.py", root)
    assert READS.test_side("/repo/src/pkg/tests/helpers.py", root), "a support module in a nested test folder"
    assert READS.test_side("/repo/check.py", root, frozenset({"/repo/check.py"})), "a module pytest collected"
    assert not READS.test_side("/repo/src/pkg/mul.py", root) and not READS.test_side("/other/tests/test_x.py", root)


def test_the_report_gives_each_base_test_its_data_and_accepting_a_file_accepts_its_readers(tmp_path: Path) -> None:
    folder = tmp_path / "reads"
    folder.mkdir()
    (folder / "reads-1.json").write_text(json.dumps({
        "repo..autobuild.worktrees.F.T.tests.test_x::test_golden": ["golden/out.txt", "pkg/mul.py", ".venv/x.txt"],
        "tests.test_x::test_other": ["golden/two.txt", "golden/gone.txt"]}))
    (folder / "reads-2.json").write_text("{not json")
    reads = pytest_reads(folder)
    assert reads == {"tests.test_x::test_golden": ["golden/out.txt"],
                     "tests.test_x::test_other": ["golden/gone.txt", "golden/two.txt"]}
    passing = ["tests.test_x::test_golden", "tests.test_x::test_other"]
    base = GateResult(passed=True, command="pytest", summary="", output="", exit_code=0, tests_passed=2,
                      tests_failed=0, failing=[], new_failures=[], ran_classes=[], runner="pytest", passing=passing,
                      reads=reads)
    files = ["tests/test_x.py", "golden/out.txt", "golden/two.txt", "pkg/mul.py"]  # not golden/gone.txt
    readers = data_read(base, files)
    assert readers == {"golden/out.txt": frozenset({passing[0]}), "golden/two.txt": frozenset({passing[1]})}
    assert in_repo(readers, "web")["web/golden/out.txt"] == frozenset({"web::tests.test_x::test_golden"})
    diff = TreeDiff(modified=frozenset({"golden/out.txt", "golden/two.txt", "pkg/mul.py"}), reads=readers)
    assert diff.test_files_changed == ["golden/out.txt", "golden/two.txt"]
    changes = account(base, base, diff, files, expectations={passing[0]: "assert '7' == '6'", passing[1]: "boom"})
    assert "with the base's golden/out.txt, which it reads" in changes[0]["detail"]
    judged = accept(changes, [Acceptance(test="golden/out.txt", reason="REQ-2")], diff.test_files_changed, readers)
    assert [change["test"] for change in unaccepted(judged)] == ["tests.test_x::test_other"]


def test_a_test_whose_read_file_was_deleted_says_so() -> None:
    base = GateResult(passed=True, command="pytest", summary="", output="", exit_code=0, tests_passed=1,
                      tests_failed=0, failing=[], new_failures=[], ran_classes=[], runner="pytest",
                      passing=["tests.test_x::test_cases"])
    run = base.copy()
    run["passing"] = []
    diff = TreeDiff(deleted=frozenset({"cases/a.txt"}), reads={"cases/a.txt": frozenset({"tests.test_x::test_cases"})})
    changes = account(base, run, diff, ["tests/test_x.py", "cases/a.txt"])
    assert [change["detail"] for change in changes] == ["its data file deleted (cases/a.txt)"]
