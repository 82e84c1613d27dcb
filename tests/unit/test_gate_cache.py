"""The gate cache's rules (issue 24): a pass is reused at once, a failure only once it has repeated (a flaky test
is never frozen as red), the store survives a new process, and the key sees the environment but not the
worktree's own path."""

from __future__ import annotations

import asyncio
from pathlib import Path

from orchestrator.gate import GateResult
from orchestrator.gate.cache import GateCache, cache_key, env_digest


def result(passed: bool, failing: list[str] | None = None) -> GateResult:
    return GateResult(passed=passed, command="pytest", summary="s", output="", exit_code=0 if passed else 1,
                      tests_passed=1, tests_failed=len(failing or []), failing=failing, new_failures=[],
                      ran_classes=None)


class Gate:
    """A gate command's stand-in that counts its runs and answers from a script."""

    def __init__(self, *answers: GateResult) -> None:
        self.answers = list(answers)
        self.runs = 0

    async def __call__(self) -> GateResult:
        self.runs += 1
        return self.answers[min(self.runs, len(self.answers)) - 1]


async def test_a_pass_is_reused_at_once_also_by_a_new_process(tmp_path: Path) -> None:
    path = tmp_path / "gate-cache.json"
    gate = Gate(result(True))
    assert (await GateCache(path).run("k", gate))["passed"]
    assert (await GateCache(path).run("k", gate))["passed"]
    assert gate.runs == 1
    other = Gate(result(True))
    await GateCache(path).run("another tree", other)
    assert other.runs == 1


async def test_a_failure_is_reused_only_once_it_repeated(tmp_path: Path) -> None:
    cache = GateCache(tmp_path / "gate-cache.json")
    flaky = Gate(result(False, ["t::a"]), result(True))
    assert not (await cache.run("k", flaky))["passed"]
    assert (await cache.run("k", flaky))["passed"], "a failure seen once is run again"
    red = Gate(result(False, ["t::b"]))
    await cache.run("red", red)
    await cache.run("red", red)
    await cache.run("red", red)
    assert red.runs == 2, "the same failure twice: from then on it is the tree's result"
    changing = Gate(result(False, ["t::a"]), result(False, ["t::c"]), result(False, ["t::c"]))
    for _ in range(4):
        await cache.run("changing", changing)
    assert changing.runs == 3, "a different failure starts counting again"


async def test_a_failure_seen_once_is_reused_only_when_the_caller_says_it_is_settled(tmp_path: Path) -> None:
    cache = GateCache(tmp_path / "gate-cache.json")
    red = Gate(result(False, ["t::known"]), result(False, ["t::other"]))
    await cache.run("k", red)
    assert (await cache.run("k", red, settled=lambda run: run["failing"] == ["t::known"]))["failing"] == ["t::known"]
    assert red.runs == 1, "its failures are all the base's: a second run could only confirm the verdict"
    assert (await cache.run("k", red, settled=lambda run: False))["failing"] == ["t::other"]
    assert red.runs == 2, "not settled: run again, as without a judge"


async def test_a_run_without_a_key_is_never_stored(tmp_path: Path) -> None:
    cache = GateCache(tmp_path / "gate-cache.json")
    gate = Gate(result(True))
    await cache.run(None, gate)
    await cache.run(None, gate)
    assert gate.runs == 2 and not (tmp_path / "gate-cache.json").exists()


def test_the_key_ignores_the_worktree_path_and_terminal_noise_but_not_the_environment(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    one, two = root / "wt" / "A", root / "wt" / "B"
    env = {"PATH": "/usr/bin", "PYTHONPATH": f"{one}/src:{one}", "PWD": str(one), "TERM": "xterm"}
    moved = {"PATH": "/usr/bin", "PYTHONPATH": f"{two}/src:{two}", "PWD": "/elsewhere", "TERM": "dumb"}
    assert env_digest(root, one, env) == env_digest(root, two, moved)
    assert env_digest(root, one, env) != env_digest(root, one, env | {"DATABASE_URL": "x"})
    before = env_digest(root, one, env)
    (root / "uv.lock").write_text("a = 1\n")
    assert env_digest(root, one, env) != before, "a lockfile of the main checkout is part of the environment"
    assert cache_key("tree", "pytest", None, before) != cache_key("tree", "pytest -x", None, before)
    assert cache_key("tree", "pytest", None, before) != cache_key("tree", "pytest", "npm ci", before)


async def test_concurrent_runs_of_different_trees_all_end_up_in_one_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "gate-cache.json"
    cache = GateCache(path)
    await asyncio.gather(*(cache.run(f"tree-{i}", Gate(result(True))) for i in range(20)))
    fresh = GateCache(path)
    assert all(fresh.lookup(f"tree-{i}") is not None for i in range(20))
    assert [p.name for p in tmp_path.iterdir()] == ["gate-cache.json"], "no temporary file left behind"
