"""review, land and discard on real repos left by real (in-process) runs: land moves the base only after the
run's gate passes on the merged result, only by compare-and-swap, and moves nothing on any refusal or failure;
discard keeps a backup ref and is idempotent."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.cli.main import main
from tests.graph.harness import Workflow, built_once, plan, task, unsandboxed
from tests.graph.test_safety import lock_holder

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "calc/__init__.py": "",
    "calc/add.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_add.py": "from calc.add import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "tests/test_known_bad.py": "def test_known_bad():\n    assert False, 'red before the run'\n",
}
SUB = {"calc/sub.py": "from calc.add import add\n\n\ndef sub(a, b):\n    return add(a, -b)\n",
       "tests/test_sub.py": "from calc.sub import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"}
MUL = {"calc/mul.py": "def mul(a, b):\n    return a * b\n",
       "tests/test_mul.py": "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"}
WRONG_NEG = {"calc/neg.py": "def neg(a):\n    return a\n",
             "tests/test_neg.py": "from calc.neg import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n"}
VERIFY = "python -m pytest -q"
RUN_TESTS = """\
import importlib, pathlib, sys, unittest


class Case(unittest.FunctionTestCase):
    def id(self):
        return f"{self._testFunc.__module__}.{self._testFunc.__name__}"


def unimportable(module, error):
    def test_module():
        raise error
    test_module.__module__ = module  # named by its module, as pytest names a collection error
    return test_module


suite = unittest.TestSuite()
for path in sorted(pathlib.Path("tests").glob("test_*.py")):
    try:
        module = importlib.import_module(f"tests.{path.stem}")
    except Exception as error:
        suite.addTest(Case(unimportable(f"tests.{path.stem}", error)))
        continue
    for name, test in vars(module).items():
        if name.startswith("test_") and callable(test):
            suite.addTest(Case(test))
sys.exit(not unittest.TextTestRunner().run(suite).wasSuccessful())
"""
CHEAP_FILES = {**{name: text for name, text in FILES.items() if name != "tests/test_known_bad.py"},
               "run_tests.py": RUN_TESTS}
CHEAP_VERIFY = "python run_tests.py"
"""A cheap variant of FILES for tests whose claim needs a gate that passes and fails as the tests do, not pytest's
ids: the tests run by unittest from a script (~0.05 CPU-s a gate run instead of pytest's ~0.7; named on the gate's
channel, so approvals are verified), no test red before the run."""
RED_FILES = {**FILES, "run_tests.py": RUN_TESTS}
"""FILES gated by the same script (CHEAP_VERIFY), with its test red before the run: this file's own templates. What
`land` proves here (red on the base never blocks, a new failure is named, the base's run reused or measured again)
needs a gate whose failures are named, not pytest's ids."""


def _build(root: Path, tasks: list[dict[str, Any]], script: dict[Any, Any], files: dict[str, str] = FILES,
           verify: str = VERIFY) -> Path:
    repo = make_sample_repo(root / "repo", files=files, plan=plan(*tasks, verify=verify))
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "user.email", "dev@example.com")

    async def run() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(root / "db.sqlite")) as saver:
            await Workflow(repo, ScriptedAgents({**script, "coach": approve()}), checkpointer=saver).run(max_turns=1)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        asyncio.run(run())
    return root


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two finished runs, built once per session: `done` (A and C approved) and `partial` (A approved; B failed,
    having written files but never reported them; its branch and worktree are left behind)."""
    return finished_runs(tmp_path_factory, "landing", RED_FILES)


def finished_runs(factory: pytest.TempPathFactory, name: str, files: dict[str, str]) -> dict[str, Path]:
    """`done` (A and C approved) and `partial` (A approved; B failed) on a repo of `files`, gated by the cheap
    script, each built once per session (`built_once`) under `name`."""
    return {
        "done": built_once(factory, f"{name}-done", lambda root: _build(
            root, [task("A"), task("C", "A")], {("player", "A"): writes(SUB), ("player", "C"): writes(MUL)},
            files, CHEAP_VERIFY)),
        "partial": built_once(factory, f"{name}-partial", lambda root: _build(
            root, [task("A"), task("B")], {("player", "A"): writes(SUB), ("player", "B"): Turn(files=WRONG_NEG)},
            files, CHEAP_VERIFY)),
    }


class Repo:
    """A copy of a template: the user's repo and the run's checkpoint DB."""

    def __init__(self, template: Path, dest: Path) -> None:
        shutil.copytree(template, dest, symlinks=True)
        self.root, self.db = dest / "repo", dest / "db.sqlite"
        old, new = str(template / "repo"), str(self.root)
        links = [*(self.root / ".git" / "worktrees").glob("*/gitdir"), *self.root.glob(".autobuild/worktrees/*/*/.git")]
        for link in links:  # the copied worktrees point at the template's folders: point them here
            link.write_text(link.read_text().replace(old, new))

    def git(self, *args: str) -> str:
        return git(self.root, *args)

    def sha(self, ref: str) -> str:
        return self.git("rev-parse", ref).strip()

    def cli(self, capsys: pytest.CaptureFixture[str], *args: str, db: bool = True) -> tuple[int, str, str]:
        code = main([*args, "--repo", str(self.root), *(["--db", str(self.db)] if db else [])])
        out, err = capsys.readouterr()
        return code, out, err

    def commit(self, files: dict[str, str], message: str) -> str:
        for name, text in files.items():
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).write_text(text)
        self.git("add", "-A", "--", *files)
        self.git("commit", "-qm", message)
        return self.sha("HEAD")

    def user_view(self) -> tuple[str, ...]:
        refs = [line for line in self.git("for-each-ref", "--format=%(refname) %(objectname)").splitlines()
                if not line.startswith("refs/heads/autobuild/")]
        return (self.git("symbolic-ref", "HEAD"), "\n".join(refs), self.git("status", "--porcelain"),
                self.git("diff", "HEAD"))

    def hook(self, name: str, body: str) -> None:
        path = self.root / ".git" / "hooks" / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)

    def land_worktree_gone(self) -> bool:
        folder = self.root / ".autobuild/worktrees/FEAT-001/_land"
        return f"worktree {folder}\n" not in self.git("worktree", "list", "--porcelain") and not folder.exists()


def valid(document: str, schema: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(document)
    text = (resources.files("orchestrator.schemas") / f"{schema}.schema.json").read_text()
    jsonschema.Draft202012Validator(json.loads(text), format_checker=jsonschema.FormatChecker()).validate(data)
    return data


@pytest.fixture
def done(templates: dict[str, Path], tmp_path: Path) -> Repo:
    return Repo(templates["done"], tmp_path / "done")


@pytest.fixture
def partial(templates: dict[str, Path], tmp_path: Path) -> Repo:
    return Repo(templates["partial"], tmp_path / "partial")


def test_review_shows_each_task_the_diff_the_reports_and_what_land_would_do(partial: Repo,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = partial.cli(capsys, "review", "FEAT-001")
    assert code == 0
    assert "A            approved" in out and "B            failed" in out
    assert "diff main...autobuild/FEAT-001: 2 file(s)" in out and "calc/sub.py" in out and "calc/neg.py" not in out
    assert str(partial.root / ".autobuild/runs/FEAT-001/A/AUTO-RUN.md") in out
    assert f"{partial.root / '.autobuild/runs/FEAT-001/report.html'} (the pictures: open it in a browser)" in out
    assert "land refuses: not every task is approved (B failed)" in out
    assert "land --partial: would merge 1 of 2 task(s) (A) into main, after `python run_tests.py` passes" in out

    partial.commit({"NOTES.md": "moved on\n"}, "main moves on")
    code, out, _ = partial.cli(capsys, "review", "FEAT-001", "--json")
    data = valid(out, "review")
    assert code == 0 and data["base"]["moved_commits"] == 1 and data["land"]["base_moved_commits"] == 1
    assert [(t["task"], t["status"], t["last_decision"]) for t in data["tasks"]] == [("A", "approved", "approve"),
                                                                                   ("B", "failed", None)]
    assert data["land"]["approved"] == ["A"] and data["land"]["not_approved"] == {"B": "failed"}
    assert data["land"]["predicted_conflicts"] == [] and data["diff"]["files_changed"] == 2
    assert Path(data["reports"]["feature"]).is_file()


def test_land_makes_a_merge_commit_with_your_hooks_once_verify_passes(done: Repo,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    old, tip = done.sha("main"), done.sha("autobuild/FEAT-001")
    done.hook("commit-msg", 'echo "Reviewed-by: the user\'s own hook" >> "$1"')
    code, out, _ = done.cli(capsys, "land", "FEAT-001", "--json")
    data = valid(out, "land")
    assert code == 0 and data["outcome"] == "landed" and data["landed"], json.dumps(data)[:3000]
    assert data["tasks_landed"] == ["A", "C"] and data["old_sha"] == old and data["new_sha"] == done.sha("main")
    assert done.git("rev-list", "--parents", "-n1", "main").split()[1:] == [old, tip], "a merge commit"
    message = done.git("log", "-1", "--format=%B", "main")
    assert "Merge autobuild/FEAT-001 into main" in message and "- A: Task A" in message
    assert "Reviewed-by: the user's own hook" in message
    gate = data["gate"]
    assert gate["passed"] and "already failing on the base" in gate["summary"], "red on the base does not block"
    # Your checkout follows main, clean; the worktree land used is gone.
    assert done.git("symbolic-ref", "HEAD").strip() == "refs/heads/main" and data["checkout"] == str(done.root)
    assert done.git("status", "--porcelain", "--untracked-files=no") == ""
    assert (done.root / "calc/mul.py").is_file() and done.land_worktree_gone()
    assert ".autobuild" not in done.git("ls-tree", "-r", "--name-only", "main"), "the run's reports stay out"

    code, out, _ = done.cli(capsys, "land", "FEAT-001")
    assert code == 0 and "nothing to land" in out and done.sha("main") == data["new_sha"]


@pytest.mark.heavy  # second of its family: `make test` stays under 5 minutes
def test_land_squash_makes_one_commit_listing_the_tasks(done: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    done.git("switch", "-qc", "work")  # main is not checked out anywhere: only its ref moves
    old = done.sha("main")
    code, out, _ = done.cli(capsys, "land", "FEAT-001", "--squash")
    assert code == 0, out
    assert done.git("rev-list", "--parents", "-n1", "main").split()[1:] == [old], "one commit on top of main"
    assert done.git("diff", "--name-only", "main", "autobuild/FEAT-001") == "", "all of the work (no reports: they"\
        " are never committed)"
    message = done.git("log", "-1", "--format=%B", "main")
    assert message.startswith("Feature (FEAT-001, squashed from autobuild/FEAT-001)")
    assert "- A: Task A" in message and "- C: Task C" in message
    assert done.git("symbolic-ref", "HEAD").strip() == "refs/heads/work" and done.sha("work") == old
    assert "landed autobuild/FEAT-001 on main as one squashed commit" in out


@pytest.mark.parametrize(("mess", "said"), [
    (lambda r: (r.root / "calc/add.py").write_text("# local edit\n"), "uncommitted changes (calc/add.py)"),
    pytest.param(lambda r: ((r.root / "x.txt").write_text("x"), r.git("add", "x.txt")), "uncommitted changes (x.txt)",
                 marks=pytest.mark.heavy, id="staged"),  # the second and third in make test-heavy
    pytest.param(lambda r: (r.root / "calc/mul.py").write_text("# mine\n"),
                 "would be overwritten by landing (calc/mul.py)", marks=pytest.mark.heavy, id="untracked-in-the-way"),
], ids=["modified", "staged", "untracked-in-the-way"])
def test_land_refuses_on_a_dirty_checkout_and_moves_nothing(done: Repo, capsys: pytest.CaptureFixture[str],
                                                            mess: Any, said: str) -> None:
    mess(done)
    before = done.user_view()
    code, _, err = done.cli(capsys, "land", "FEAT-001")
    assert code == 2 and said in err and "Nothing was moved." in err and err.count("\n") == 1, err
    assert done.user_view() == before and done.land_worktree_gone()


def test_land_refuses_unapproved_tasks_unless_partial_which_lands_only_approved_work(
        partial: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    before = partial.user_view()
    code, _, err = partial.cli(capsys, "land", "FEAT-001")
    assert code == 2 and "not every task is approved (B failed)" in err and partial.user_view() == before
    code, out, _ = partial.cli(capsys, "land", "FEAT-001", "--partial")
    assert code == 0 and "not landed: B (failed)" in out
    assert "running `" not in out, "the base has not moved: the run's own gate run on it is reused"
    assert (partial.root / "calc/sub.py").is_file() and not (partial.root / "calc/neg.py").exists()
    assert "Not landed (not approved):\n- B: failed" in partial.git("log", "-1", "--format=%B", "main")


def test_land_after_the_base_moved_merges_it_verifies_again_and_lands(done: Repo,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    red_there = {"tests/test_new_red.py": "def test_red_on_main_too():\n    assert False\n", "NOTES.md": "n\n"}
    moved = done.commit(red_there, "main moves on, with a red test of its own")
    code, out, _ = done.cli(capsys, "land", "FEAT-001")
    assert code == 0, out
    assert "main moved 1 commit(s) since the run: merging them in and verifying the result" in out
    assert "running `python run_tests.py` on main" in out, "what is red on the moved base is measured again"
    assert done.git("rev-list", "--parents", "-n1", "main").split()[1:] == [moved, done.sha("autobuild/FEAT-001")]
    assert (done.root / "NOTES.md").is_file() and (done.root / "calc/sub.py").is_file()


def test_land_refuses_on_a_failing_verify_and_moves_nothing(done: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    renamed = {"calc/add.py": "def plus(a, b):\n    return a + b\n",
               "tests/test_add.py": "from calc.add import plus\n\n\ndef test_plus():\n    assert plus(2, 3) == 5\n"}
    moved = done.commit(renamed, "rename add to plus: green on main, breaks the feature's sub")
    before = done.user_view()
    code, out, _ = done.cli(capsys, "land", "FEAT-001", "--json")
    data = valid(out, "land")
    assert code == 1 and data["outcome"] == "verify_failed" and not data["landed"] and data["new_sha"] is None
    assert "tests.test_sub" in data["detail"] and data["gate"]["new_failures"], data["gate"]
    assert "tests.test_known_bad" not in " ".join(data["gate"]["new_failures"]), "red on the base is not new"
    assert done.sha("main") == moved and done.user_view() == before and done.land_worktree_gone()


def test_land_refuses_a_conflict_naming_the_files(done: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    moved = done.commit({"calc/sub.py": "def sub(a, b):\n    return a - b  # main's own\n"}, "main adds sub too")
    code, out, _ = done.cli(capsys, "land", "FEAT-001")
    assert code == 1 and "not landed (conflict)" in out and "in calc/sub.py" in out
    assert done.sha("main") == moved and done.land_worktree_gone()


def test_land_does_not_move_a_branch_that_moved_after_it_was_read(
        done: Repo, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Another process commits on main while land verifies (the verify command plays that other process, so it
    # runs unsandboxed: in the sandbox its commit on main would be refused, as it should be).
    unsandboxed(tmp_path, monkeypatch)
    sneak = f"{CHEAP_VERIFY}; s=$?; git -C {done.root} commit -q --allow-empty -m concurrent; exit $s"
    code, out, _ = done.cli(capsys, "land", "FEAT-001", "--verify", sneak)
    assert code == 1 and "not landed (not moved): main moved while landing" in out
    assert done.git("log", "-1", "--format=%s", "main").strip() == "concurrent", "the other commit stays on top"


@pytest.mark.parametrize(("hook", "squash"), [("commit-msg", True), ("pre-commit", True), ("pre-commit", False)])
def test_a_hook_that_rejects_the_commit_moves_nothing(hook: str, squash: bool, done: Repo,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    done.hook(hook, "echo 'policy: every commit needs a ticket number' >&2; exit 1")
    before = done.user_view()
    code, out, _ = done.cli(capsys, "land", "FEAT-001", *(["--squash"] if squash else []))
    assert code == 1 and "not landed (commit refused)" in out and "needs a ticket number" in out
    assert done.user_view() == before and done.land_worktree_gone()


def test_land_refuses_work_on_the_feature_branch_that_no_approval_covers(done: Repo,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    tip = done.sha("autobuild/FEAT-001")
    extra = done.git("commit-tree", f"{tip}^{{tree}}", "-p", tip, "-m", "a hand-made commit").strip()
    done.git("update-ref", "refs/heads/autobuild/FEAT-001", extra)
    code, _, err = done.cli(capsys, "land", "FEAT-001")
    assert code == 2 and f"commits no task's approval covers ({extra[:10]} a hand-made commit)" in err


def test_discard_keeps_backup_refs_and_is_idempotent(partial: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    tip, failed = partial.sha("autobuild/FEAT-001"), partial.sha("autobuild/FEAT-001.B")
    before = partial.user_view()
    code, out, _ = partial.cli(capsys, "discard", "FEAT-001", "--json", db=False)
    data = valid(out, "discard")
    assert code == 0 and data["removed_branches"] == ["autobuild/FEAT-001", "autobuild/FEAT-001.B"]
    assert data["removed_worktrees"] == [str(partial.root / ".autobuild/worktrees/FEAT-001/B")]
    backups = {b["branch"]: b for b in data["backups"]}
    assert backups["autobuild/FEAT-001"]["sha"] == tip
    # B's failed attempt was reset to where it started (in the feature branch): nothing of its own to keep.
    assert "autobuild/FEAT-001.B" not in backups and partial.git("merge-base", "--is-ancestor", failed, tip) == ""
    assert partial.git("for-each-ref", "--format=%(refname)", "refs/heads/autobuild/FEAT-001*") == ""
    assert not (partial.root / ".autobuild/worktrees/FEAT-001").exists() and partial.user_view() == before
    partial.git(*data["restore"][0].split()[1:])
    assert partial.sha("autobuild/FEAT-001") == tip, "the printed command restores the branch"
    partial.git("branch", "-D", "autobuild/FEAT-001")

    code, out, _ = partial.cli(capsys, "discard", "FEAT-001", db=False)
    assert code == 0 and out.strip() == "nothing to discard for FEAT-001"
    assert len(partial.git("for-each-ref", "refs/heads/autobuild/discarded/").splitlines()) == 1


@pytest.fixture
def held(partial: Repo) -> Iterator[subprocess.Popen[str]]:
    holder = lock_holder(partial.root)
    yield holder
    holder.kill()
    holder.wait()


def test_land_and_discard_refuse_while_a_run_holds_the_repo(partial: Repo, held: subprocess.Popen[str],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    before = partial.user_view()
    for args, db in ((["land", "FEAT-001", "--partial"], True), (["discard", "FEAT-001"], False)):
        code, _, err = partial.cli(capsys, *args, db=db)
        assert code == 2 and f"already being run by pid {held.pid} (`run FEAT-001` since" in err, err
    assert partial.user_view() == before and partial.sha("autobuild/FEAT-001")
    assert partial.cli(capsys, "review", "FEAT-001")[0] == 0, "review only reads"


def test_unknown_features_and_missing_runs_are_one_line_errors(partial: Repo, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = partial.cli(capsys, "review", "FEAT-404")
    assert code == 2 and err.startswith("error: ") and "FEAT-404" in err and err.count("\n") == 1
    other_db = ["--db", str(tmp_path / "elsewhere.sqlite")]
    code = main(["land", "FEAT-001", "--partial", "--repo", str(partial.root), *other_db, "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and json.loads(out)["exit_code"] == 2 and "has not run here" in json.loads(out)["error"]
    assert not (tmp_path / "elsewhere.sqlite").exists() and "Traceback" not in err
