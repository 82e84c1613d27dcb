"""Landing (issue 24), in-process on the compiled graphs with scripted agents and real git: what lands is exactly
what a gate passed (a fast-forward of the feature branch), each tree is gated once, the base's run is reused by a
later run on the same base, and a conflict with the feature head goes back to the player as a conflict turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.roles import CoachInput, PlayerInput
from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import AgentInput, ScriptedAgents, Turn, approve, writes
from tests.graph.harness import CALC_FILES, Workflow, plan, task, unsandboxed

GATE = '''\
import pathlib, subprocess, sys, time
LOG, FLAGS, REPO = {log!r}, pathlib.Path({flags!r}), {repo!r}
have = "".join(sorted(p.stem for p in pathlib.Path("calc").glob("*.py") if len(p.stem) == 1))
with open(LOG, "a") as log:
    log.write(have + "\\n")


def on_feature(name):
    return subprocess.run(["git", "-C", REPO, "cat-file", "-e", f"autobuild/FEAT-001:calc/{{name}}.py"]).returncode == 0


def git(*args, **kw):
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True, text=True, **kw).stdout.strip()


def move_feature_elsewhere():
    """Another writer adds calc/e.py on the feature branch (plumbing only: no checkout is touched)."""
    head = git("rev-parse", "autobuild/FEAT-001")
    blob = git("hash-object", "-w", "--stdin", input="E = 1\\n")
    index = {{"GIT_INDEX_FILE": str(FLAGS / "index"), "PATH": __import__("os").environ["PATH"]}}
    git("read-tree", head, env=index)
    git("update-index", "--add", "--cacheinfo", f"100644,{{blob}},calc/e.py", env=index)
    tree = git("write-tree", env=index)
    commit = git("-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", tree, "-p", head, "-m", "elsewhere")
    git("update-ref", "refs/heads/autobuild/FEAT-001", commit, head)


def wait(condition):
    for _ in range(600):
        if condition():
            return
        time.sleep(0.05)
    sys.exit(3)  # never hangs the test: a gate that waited in vain fails


WAITS = {waits}
FAIL = False
if have in WAITS:
    kind, what = WAITS[have]
    if kind == "move":
        move_feature_elsewhere()
    elif kind == "queued":  # until every named task waits to land
        traces = [pathlib.Path(REPO, ".autobuild/runs/FEAT-001", task, "trace.jsonl") for task in what.split()]
        wait(lambda: all(t.exists() and '"queued"' in t.read_text() for t in traces))
    elif kind == "feature":
        wait(lambda: on_feature(what))
    elif kind == "ran":  # until the gate has started on that tree
        wait(lambda: what in pathlib.Path(LOG).read_text().splitlines())
    elif kind == "fail":  # a semantic conflict: this tree's tests fail
        FAIL = True
    else:
        wait(lambda: (FLAGS / what).exists())

import unittest


class Tree(unittest.TestCase):
    """The tree's one test, by unittest: its result on the gate's channel, so approvals are verified."""

    def test_tree(self):
        self.assertFalse(FAIL, "a semantic conflict: this tree's tests fail")


unittest.main(argv=["gate"])
'''



@pytest.fixture(autouse=True)
def _gate_writes_outside_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This file's gate script logs to tmp_path and moves the feature branch mid-gate (what another process
    would do): under the sandbox both are refused, so it runs unsandboxed."""
    unsandboxed(tmp_path, monkeypatch)

def counting_repo(tmp_path: Path, *tasks: dict[str, Any], waits: dict[str, tuple[str, str]] | None = None,
                  files: dict[str, str] | None = None) -> tuple[Path, Path]:
    """A repo whose gate (outside the repo) logs the task files of each tree it runs on, one line per run."""
    log, flags = tmp_path / "gate-runs.log", tmp_path / "flags"
    flags.mkdir()
    script = tmp_path / "gate.py"
    repo_path = tmp_path / "repo"
    script.write_text(GATE.format(log=str(log), flags=str(flags), repo=str(repo_path), waits=waits or {}))
    repo = make_sample_repo(repo_path, files={**CALC_FILES, **(files or {})},
                            plan=plan(*tasks, verify=f"python {script}"))
    return repo, log


def gate_runs(log: Path) -> list[str]:
    """The trees the gate ran on, in order, each base check once: a base judged by test ids is run twice in a row
    (gate/baseline.py: tests that come and go are not held against tasks)."""
    runs = log.read_text().splitlines() if log.exists() else []
    return [tree for index, tree in enumerate(runs) if not (tree == "" and index and runs[index - 1] == "")]


def one_file(name: str, **extra: Any) -> Turn:
    return writes({f"calc/{name}.py": f"NAME = {name!r}\n"}, **extra)


def merges(run: Any, task_id: str) -> list[dict[str, Any]]:
    return [e for e in run.events if e["event"] == "merge" and e.get("task") == task_id]


async def test_a_chain_of_three_tasks_gates_each_tree_once_and_lands_by_fast_forward(tmp_path: Path) -> None:
    repo, log = counting_repo(tmp_path, task("A"), task("B", "A"), task("C", "B"))
    agents = ScriptedAgents({("player", "A"): one_file("a"), ("player", "B"): one_file("b"),
                             ("player", "C"): one_file("c"), "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert all(run.status(t) == "approved" for t in "ABC")
    assert gate_runs(log) == ["", "a", "ab", "abc"], "the base and each task's tree, once: no integration re-run"
    tip = git(repo, "rev-parse", "autobuild/FEAT-001").strip()
    assert run.results["C"]["sha"] == tip, "the tree the gate passed is the tree that landed"
    assert git(repo, "log", "--merges", "--format=%H", "autobuild/FEAT-001") == "", "fast-forwards, no merge commits"
    assert [e["brought_up"] for t in "ABC" for e in merges(run, t)] == [0, 0, 0]
    end = next(e for e in run.events if e["event"] == "feature_end")
    assert end["gate_cache"] == {"gate_runs": 3, "gate_runs_reused": 3}, "each landing reused its coach-turn run"


async def test_a_second_run_reuses_the_base_run_and_a_changed_lockfile_invalidates_it(tmp_path: Path) -> None:
    repo, log = counting_repo(tmp_path, task("A"), files={"requirements.txt": "attrs==23.1\n"})
    script: dict[Any, Any] = {("player", "A"): one_file("a"), "coach": approve()}
    first = await Workflow(repo, ScriptedAgents(script), thread="one").run()
    assert first.status("A") == "approved" and gate_runs(log) == ["", "a"]

    git(repo, "branch", "-D", "autobuild/FEAT-001")  # a new run on the same base
    second = await Workflow(repo, ScriptedAgents(script), thread="two").run()
    assert second.status("A") == "approved"
    assert gate_runs(log) == ["", "a"], "neither the base nor the same task tree was gated again"
    start = next(e for e in second.events if e["event"] == "feature_start")
    assert "reused" in start["gate_base"]

    git(repo, "branch", "-D", "autobuild/FEAT-001")
    (repo / "requirements.txt").write_text("attrs==24.2\n")  # the environment the gate runs in changed
    third = await Workflow(repo, ScriptedAgents(script), thread="three").run()
    assert third.status("A") == "approved"
    assert gate_runs(log) == ["", "a", "", "a"], "a changed lockfile is a new environment: gated again"


RED_GATE = """\
import pathlib, unittest
with open({log!r}, "a") as log:
    log.write("".join(sorted(p.stem for p in pathlib.Path("calc").glob("*.py") if len(p.stem) == 1)) + "\\n")


class Tree(unittest.TestCase):
    def test_tree(self):
        pass

    def test_known_bad(self):
        self.fail("red before the run")


unittest.main(argv=["gate"])
"""


async def test_on_a_red_base_each_tree_is_gated_once_too(tmp_path: Path) -> None:
    """A task's run on a red base fails (the base's own failure), and a failure is remembered as a tree's result
    only once it repeated; but one whose failures are all the base's is a pass whatever a second run shows: the
    landing reuses the coach's turn's run instead of gating the same tree again."""
    log, script = tmp_path / "gate-runs.log", tmp_path / "gate.py"
    script.write_text(RED_GATE.format(log=str(log)))
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES,
                            plan=plan(task("A"), task("B", "A"), verify=f"python {script}"))
    agents = ScriptedAgents({("player", "A"): one_file("a"), ("player", "B"): one_file("b"), "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.status("A") == "approved" and run.status("B") == "approved"
    assert gate_runs(log) == ["", "a", "ab"], "the base (twice in a row: a red base) and each task's tree, once"
    end = next(e for e in run.events if e["event"] == "feature_end")
    assert end["gate_cache"]["gate_runs_reused"] == 2, "each landing reused its coach-turn run"


SHARED = {"calc/shared.py": "V = [0]\n"}


def conflict_repo(tmp_path: Path) -> Path:
    """A and B change one line; B's own gate waits until A has landed, so B is always the one that conflicts."""
    repo, _ = counting_repo(tmp_path, task("A"), task("B"), waits={"b": ("feature", "a")}, files=SHARED)
    return repo


A_WORK = {"calc/shared.py": "V = ['a']\n", "calc/a.py": "A = 1\n"}
B_WORK = {"calc/shared.py": "V = ['b']\n", "calc/b.py": "B = 1\n"}


class Seen:
    """What the player found in its worktree at the start of each session (before it writes)."""

    def __init__(self) -> None:
        self.shared: list[str] = []

    def then(self, *turns: Turn) -> Any:
        """Plays `turns` one per session (the last repeats)."""
        def play(data: AgentInput) -> Turn:
            self.shared.append((data.worktree / "calc/shared.py").read_text())
            return turns[min(len(self.shared), len(turns)) - 1]
        return play


async def test_a_conflict_goes_back_to_the_player_who_resolves_it_and_both_changes_land(tmp_path: Path) -> None:
    repo = conflict_repo(tmp_path)
    seen = Seen()
    agents = ScriptedAgents({("player", "A"): writes(A_WORK),
                             ("player", "B", 1): writes(B_WORK),
                             ("player", "B", 2): seen.then(writes({"calc/shared.py": "V = ['a', 'b']\n"})),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=2)
    assert run.status("A") == "approved" and run.status("B") == "approved"
    result = run.results["B"]
    assert result["turns"] == 2 and result["conflict_turns"] == 1 and result["merged"]
    assert git(repo, "show", "autobuild/FEAT-001:calc/shared.py") == "V = ['a', 'b']\n", "both changes"
    assert result["sha"] == git(repo, "rev-parse", "autobuild/FEAT-001").strip(), "B landed as a fast-forward"
    # The conflict turn: markers in place, both sides described, and the coach told what the turn was.
    assert "<<<<<<<" in seen.shared[0] and "V = ['a']" in seen.shared[0] and "V = ['b']" in seen.shared[0]
    player = next(c.input for c in agents.calls if c.role == "player" and c.task == "B" and c.turn == 2)
    assert isinstance(player, PlayerInput)
    notes = "\n".join(player.feedback_notes)
    assert "resolves a merge conflict" in notes and "changed on the feature branch by A" in notes
    assert [item["file"] for item in player.feedback] == ["calc/shared.py"]
    coach = next(c.input for c in agents.calls if c.role == "coach" and c.task == "B" and c.turn == 2)
    assert isinstance(coach, CoachInput) and coach.conflict.startswith("Yes") and "calc/shared.py" in coach.conflict
    first = next(c.input for c in agents.calls if c.role == "coach" and c.task == "B" and c.turn == 1)
    assert isinstance(first, CoachInput) and first.conflict.startswith("No")
    assert "**Conflict turns:** 1" in (repo / ".autobuild/runs/FEAT-001/B/AUTO-RUN.md").read_text()
    assert "**Conflict turns:** 1" in (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()


async def test_a_resolution_that_still_conflicts_ends_as_conflict_with_the_branch_kept(tmp_path: Path) -> None:
    repo = conflict_repo(tmp_path)
    agents = ScriptedAgents({("player", "A"): writes(A_WORK),
                             ("player", "B", 1): writes(B_WORK),
                             ("player", "B", 2): writes({"calc/other.py": "X = 1\n"}),  # markers left in place
                             "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=2)
    assert run.status("B") == "conflict" and "markers left in calc/shared.py" in run.results["B"]["reason"]
    assert run.results["B"]["conflict_turns"] == 1
    assert git(repo, "show", "autobuild/FEAT-001:calc/shared.py") == "V = ['a']\n"
    assert git(repo, "show", "autobuild/FEAT-001.B:calc/shared.py") == "V = ['b']\n", "its approved work is kept"
    assert "<<<<<<<" not in git(repo, "show", "autobuild/FEAT-001.B:calc/shared.py")


async def test_a_crash_in_a_conflict_turn_resumes_with_the_conflict_recreated(tmp_path: Path) -> None:
    repo = conflict_repo(tmp_path)
    seen = Seen()
    crash = Turn(raises=OSError("disk full"))
    agents = ScriptedAgents({("player", "A"): writes(A_WORK),
                             ("player", "B", 1): writes(B_WORK),
                             ("player", "B", 2): seen.then(crash, writes({"calc/shared.py": "V = ['a', 'b']\n"})),
                             "coach": approve()})
    workflow = Workflow(repo, agents, checkpointer=InMemorySaver())
    first = await workflow.run(parallel=2)
    assert first.output is None and "task_error" in first.kinds("B")
    second = await workflow.run(fresh_input=False)
    assert second.status("B") == "approved" and second.results["B"]["conflict_turns"] == 1
    assert len(seen.shared) == 2 and seen.shared[0] == seen.shared[1] and "<<<<<<<" in seen.shared[1]
    assert git(repo, "show", "autobuild/FEAT-001:calc/shared.py") == "V = ['a', 'b']\n"


@pytest.mark.heavy  # a second case of its family in `make test`: kept under 5 minutes
async def test_the_head_moving_during_a_gate_brings_the_task_up_and_gates_it_again(tmp_path: Path) -> None:
    # B's own gate waits until A has landed: the head moved during it, so B is brought up onto A and its merged
    # tree gated before it lands. While that gate runs, something else moves the feature branch (a commit adding
    # calc/e.py): the compare-and-swap refuses, and B is brought up and gated once more.
    waits = {"b": ("feature", "a"), "ab": ("move", "")}
    repo, log = counting_repo(tmp_path, task("A"), task("B"), waits=waits)
    agents = ScriptedAgents({("player", "A"): one_file("a"), ("player", "B"): one_file("b"), "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=2)
    assert run.status("A") == "approved" and run.status("B") == "approved"
    runs = gate_runs(log)
    # "ae": the head something else moved to was never gated; what passed there is what B must keep passing.
    assert sorted(runs) == ["", "a", "ab", "abe", "ae", "b"], "each tree once, and the landing tree always gated"
    assert runs.index("ab") < runs.index("abe")
    moved = [e for e in run.events if e["event"] == "landing" and e.get("task") == "B" and e.get("moved")]
    assert len(moved) == 1 and "moved during the gate" in moved[0]["reason"]
    landed = next(e for e in merges(run, "B") if e["merged"])
    assert landed["brought_up"] == 2
    assert run.results["B"]["sha"] == git(repo, "rev-parse", "autobuild/FEAT-001").strip()
    files = git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001")
    assert all(f"calc/{name}.py" in files for name in "abe")


async def test_tasks_waiting_to_land_are_gated_as_one_batch(tmp_path: Path) -> None:
    # Z lands first; A, B and C (their own gates wait for Z) then all wait to land. Whoever lands first takes
    # along those already waiting; if it lands alone, its gate waits until the other two wait behind it, so the
    # next landing takes the last one along: never one gate run per task.
    single = {f"{name}z": ("queued", "A B C") for name in "abc"}
    repo, log = counting_repo(tmp_path, task("Z"), task("A"), task("B"), task("C"),
                              waits={**single, **{name: ("feature", "z") for name in "abc"}})
    agents = ScriptedAgents({**{("player", t): one_file(t.lower()) for t in "ZABC"}, "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=4)
    assert all(run.status(t) == "approved" for t in "ZABC")
    runs = gate_runs(log)
    assert runs[0] == "" and sorted(runs[1:5]) == ["a", "b", "c", "z"] and runs[-1] == "abcz"
    assert len(runs) <= 7, "one landing run for at least two of A, B, C"
    batches = [e["batch"] for t in "ABC" for e in merges(run, t) if e["merged"] and e["batch"]]
    assert batches and all(batches), batches
    files = git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001")
    assert all(f"calc/{name}.py" in files for name in "zabc")
    tip = git(repo, "rev-parse", "autobuild/FEAT-001").strip()
    assert tip in {run.results[t]["sha"] for t in "ABC"}, "the batch landed as a fast-forward"


@pytest.mark.heavy  # second of its family: `make test` stays under 5 minutes
async def test_a_failing_batch_is_split_in_half_so_the_tasks_that_pass_together_still_land_together(
        tmp_path: Path) -> None:
    # Z lands, then A (its landing gate holds until B, C and D wait behind it). The next lander (B or C) takes
    # the other and D along: D breaks any tree it shares with B or C. The batch's gate fails; its first half (the
    # lander with the other of B and C) passes and lands in one more run, never the lander alone; D lands last,
    # on its own, and fails.
    waits = {"a": ("feature", "z"), "b": ("ran", "az"), "c": ("ran", "az"), "d": ("queued", "B C"),
             "az": ("queued", "B C D"), **{tree: ("fail", "") for tree in ("abcdz", "abdz", "acdz")}}
    repo, log = counting_repo(tmp_path, task("Z"), task("A"), task("B"), task("C"), task("D"), waits=waits)
    agents = ScriptedAgents({**{("player", t): one_file(t.lower()) for t in "ZABCD"}, "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=5, max_turns=1)
    assert [run.status(t) for t in "ZABC"] == ["approved"] * 4 and run.status("D") == "failed"
    runs = gate_runs(log)
    assert "abcdz" in runs and "abcz" in runs and runs.index("abcdz") < runs.index("abcz")
    assert "abz" not in runs and "acz" not in runs, "the split tried half the batch, not the lander alone"
    lander = next(t for t in "BC" if any(e["batch"] for e in merges(run, t) if e["merged"]))
    other = "C" if lander == "B" else "B"
    assert [e["batch"] for e in merges(run, lander) if e["merged"]] == [[other]]
    split = [e["reason"] for e in run.events
             if e["event"] == "landing" and "failed on the batch" in e.get("reason", "")]
    assert split == [f"the gate failed on the batch with {other}, D: landing {lander} with {other}"]
    files = git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001")
    assert all(f"calc/{name}.py" in files for name in "zabc") and "calc/d.py" not in files


@pytest.mark.heavy  # second of its family: `make test` stays under 5 minutes
async def test_an_api_outage_in_a_conflict_turn_is_an_error_and_resume_recreates_the_conflict(tmp_path: Path) -> None:
    repo = conflict_repo(tmp_path)
    seen = Seen()
    agents = ScriptedAgents({("player", "A"): writes(A_WORK),
                             ("player", "B", 1): writes(B_WORK),
                             ("player", "B", 2): seen.then(Turn(status="api_error"),
                                                           writes({"calc/shared.py": "V = ['a', 'b']\n"})),
                             "coach": approve()})
    workflow = Workflow(repo, agents, checkpointer=InMemorySaver())
    first = await workflow.run(parallel=2)
    assert first.output is None and "model API error" in str([e for e in first.events if e["event"] == "task_error"])
    second = await workflow.run(fresh_input=False)
    assert second.status("B") == "approved" and second.results["B"]["turns"] == 2
    assert len(seen.shared) == 2 and "<<<<<<<" in seen.shared[1]
    assert git(repo, "show", "autobuild/FEAT-001:calc/shared.py") == "V = ['a', 'b']\n"
