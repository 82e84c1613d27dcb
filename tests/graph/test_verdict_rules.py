"""The verdict rules' version is part of every gate cache key (issue 38): a tree gated under older rules is gated
again (a resumed run's landing gate goes through the cache, so this is what re-gates it), under the same rules it
is not, and the record says which rules decided it."""

from __future__ import annotations

import json
from pathlib import Path

from agents.testing.repos import git, make_sample_repo
from orchestrator.gate import VERDICT_RULES, GateRequest, Gates, gate_env
from orchestrator.gate.cache import CACHE_NAME, cache_key, env_digest, worktree_tree
from orchestrator.repo.git import GitRepo

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "calc/__init__.py": "",
    "calc/mul.py": "def mul(a, b):\n    return a * b\n",
    "tests/__init__.py": "",
    "tests/test_mul.py": "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}
VERIFY = "python -m pytest -q"


def test_the_rules_version_is_in_the_key() -> None:
    assert cache_key("tree", VERIFY, None, "env") == cache_key("tree", VERIFY, None, "env", VERDICT_RULES)
    assert cache_key("tree", VERIFY, None, "env") != cache_key("tree", VERIFY, None, "env", "0")


async def test_a_tree_gated_under_older_rules_is_gated_again(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=FILES)
    git_repo = GitRepo(repo)
    gates = Gates(git_repo, GateRequest(plan_verify=VERIFY, timeout_s=120))
    setup = await gates.check_base("FEAT-001", git(repo, "rev-parse", "HEAD").strip())
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "probe"
    await git_repo.add_detached_worktree(worktree, "HEAD")
    (worktree / "calc" / "add.py").write_text("def add(a, b):\n    return a + b\n")
    git(worktree, "add", "-A")
    git(worktree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "add")
    first = await gates.run(worktree)
    assert first.ran and first.result["passed"] and first.result.get("rules") == VERDICT_RULES

    tree = await worktree_tree(git_repo, worktree)
    assert tree is not None
    environment = env_digest(repo, worktree, gate_env(repo, worktree))
    now, older = (cache_key(tree, VERIFY, setup["setup"], environment, rules) for rules in (VERDICT_RULES, "0"))
    store = repo / ".autobuild" / "runs" / CACHE_NAME
    entries = json.loads(store.read_text())["entries"]
    entries[older] = entries.pop(now)  # as the previous rules left it
    store.write_text(json.dumps({"entries": entries}))

    def fresh() -> Gates:
        found = Gates(git_repo, GateRequest(plan_verify=VERIFY, timeout_s=120))
        found.decided = setup
        return found

    again = await fresh().run(worktree)
    assert again.ran, "a verdict of older rules is never reused"
    assert (await fresh().run(worktree)).ran is False, "the same rules reuse it"
