"""Where an edit to a runner's config can deselect base tests: the line the accounting names ("gone: deselected by
package.json:3"); package.json edits outside the runner keys (a dependency) and code edits are no test change."""

from __future__ import annotations

from orchestrator.facts import GateResult
from orchestrator.gate.spec import accounting, test_files
from orchestrator.gate.spec.accounting import TreeDiff, account
from orchestrator.gate.spec.test_files import config_line

PACKAGE = '{\n  "name": "calc",\n  "scripts": {"test": "node --test"},\n  "dependencies": {}\n}\n'


def test_a_dependency_added_to_package_json_is_no_test_change() -> None:
    tree = PACKAGE.replace('"dependencies": {}', '"dependencies": {"left-pad": "1.3.0"}')
    assert config_line("package.json", "@@ -4 +4 @@\n", PACKAGE, tree) is None


def test_package_json_names_its_first_changed_runner_key() -> None:
    tree = PACKAGE.replace('"node --test"', '"node --test test/zero.test.js"')
    assert config_line("package.json", "@@ -3 +3 @@\n", PACKAGE, tree) == 3
    jest = PACKAGE.replace('  "name"', '  "jest": {"testPathIgnorePatterns": ["mul"]},\n  "name"')
    assert config_line("packages/a/package.json", "", PACKAGE, jest) == 2


def test_a_build_constraint_added_to_a_go_test_file_names_its_line() -> None:
    patch = "diff --git a/mul_test.go b/mul_test.go\n@@ -1,0 +1,2 @@\n+//go:build never\n+\n"
    assert config_line("mul_test.go", patch) == 1
    later = "@@ -3,0 +4,2 @@\n+// a comment\n+//go:build never\n"
    assert config_line("pkg/mul_test.go", later) == 5
    assert config_line("mul_test.go", "@@ -6 +6 @@\n-\tif Mul(2, 3) != 6 {\n+\tif Mul(2, 3) != 7 {\n") is None


def test_runner_config_files_name_their_first_changed_line() -> None:
    assert config_line(".npmrc", "@@ -0,0 +1 @@\n+node-options=\n") == 1
    assert config_line("jest.config.js", "@@ -2 +2 @@\n-a\n+b\n") == 2
    assert config_line("calc/mul.py", "@@ -2 +2 @@\n-a\n+b\n") is None


def _run(passing: list[str], failing: list[str]) -> GateResult:
    return GateResult(passed=not failing, command="python -m unittest", summary="", output="", exit_code=int(
        bool(failing)), tests_passed=len(passing), tests_failed=len(failing), failing=failing, new_failures=[],
        ran_classes=None, runner="unittest", passing=passing)


def test_a_base_test_whose_subtests_fail_is_failing_not_gone() -> None:
    """unittest names a failing subTest `id (n=1)`, go `TestX/case`: the base's passing parent fails with them."""
    base = _run(["tests.test_r.SieveTests.test_prime_counts", "pkg.TestTable"], [])
    run = _run([], ["tests.test_r.SieveTests.test_prime_counts (n=100)", "pkg.TestTable/case#01"])
    changes = account(base, run, TreeDiff(config_lines={"tox.ini": 6}), ["tests/test_r.py"])
    assert [(change["test"], change["fate"]) for change in changes] == [
        ("pkg.TestTable", "failing"), ("tests.test_r.SieveTests.test_prime_counts", "failing")]


def test_a_file_the_base_names_in_a_passing_id_is_a_test_file_whatever_it_is_called() -> None:
    """`node check.js` collects tests from check.js: a change to it is a test change (overlaid, accepted), while a
    Python id naming a code module (a doctest) leaves it to gate/spec/inline_tests.py."""
    base: GateResult = {"passing": ["check.js > table > aligns", "lib/doc.py::lib.doc.f", "spec/a.mjs > x"]}
    hosts = accounting.test_hosts(base, ["check.js", "lib/doc.py", "spec/a.mjs", "index.js"])
    assert hosts == {"check.js", "spec/a.mjs"}
    diff = accounting.TreeDiff(modified=frozenset({"check.js", "index.js", "lib/doc.py"}), hosts=hosts)
    assert diff.test_files_changed == ["check.js"]
    assert all(test_files.is_test_file(name) for name in ("test.js", "test.mjs", "test-mul.js", "mul-test.cjs"))
    assert not test_files.is_test_file("testing.js")


def test_a_test_no_longer_run_names_the_test_side_files_the_task_touched() -> None:
    """tomli's `load_tests` added to tests/__init__.py, go-humanize's new `TestMain` in main_test.go: the test's own
    file and the runner's config are unchanged, and the refusal names the hook's file instead of saying nothing."""
    base = _run(["tests.test_misc.MiscTests.test_load", "tests.test_misc.MiscTests.test_dump"], [])
    run = _run(["tests.test_misc.MiscTests.test_dump"], [])
    files = ["tests/__init__.py", "tests/test_misc.py", "src/tomli/_parser.py"]
    hooked = account(base, run, TreeDiff(modified=frozenset({"tests/__init__.py", "src/tomli/_parser.py"})), files)
    assert [(change["test"], change["fate"], change["detail"]) for change in hooked] == [
        ("tests.test_misc.MiscTests.test_load", "gone",
         "no longer run; the task added or changed on the test side: tests/__init__.py")]
    [alone] = account(base, run, TreeDiff(modified=frozenset({"src/tomli/_parser.py"})), files)
    assert alone["detail"] == "no longer run (its file and the runner's config are unchanged)"


def test_a_test_whose_module_did_not_load_is_failing_not_gone() -> None:
    """python-humanize without its generated _version.py: every test module fails to import; its tests are the
    run's failures (named by the module that did not load), not 715 tests gone because of a test file the task
    added."""
    base = _run(["tests.test_number::test_ordinal", "tests.test_time::test_naturaltime"], [])
    run = _run([], ["tests.test_number", "tests.test_time"])
    run["load_errors"] = ["tests.test_number", "tests.test_time"]
    changes = account(base, run, TreeDiff(added=frozenset({"tests/test_extra.py"})),
                      ["tests/test_number.py", "tests/test_time.py"])
    assert [(change["test"], change["fate"], change["detail"]) for change in changes] == [
        ("tests.test_number::test_ordinal", "failing", "its file did not load here (tests.test_number)"),
        ("tests.test_time::test_naturaltime", "failing", "its file did not load here (tests.test_time)")]


def test_a_test_skipped_by_a_narrowed_script_names_where_the_task_changed_what_runs() -> None:
    """vercel/ms: its package.json's test scripts given jest's `-t '^(?!.*weeks to ms)'`; the base's three tests
    are skipped, and the refusal names package.json, not only "a marker, a condition or a filter"."""
    test = "src/parse.test.ts > parse(long string) > should convert weeks to ms"
    base, run = _run([test], []), _run([], [])
    run["skipped_ids"] = [test]
    files = ["src/parse.test.ts", "src/index.ts", "package.json"]
    [narrowed] = account(base, run, TreeDiff(modified=frozenset({"package.json"}), config_lines={"package.json": 12}),
                         files)
    assert (narrowed["fate"], narrowed["detail"]) == (
        "skipped", "the runner skipped it here; the task changed what runs: package.json:12")
    [marked] = account(base, run, TreeDiff(modified=frozenset({"src/parse.test.ts"})), files)
    assert marked["detail"] == "the runner skipped it here (a marker, a condition or a filter)"
