"""A nested Go module is judged as the top is (issue 31): a player that bends the module's test (deletes it, skips
it, rewrites its expectation, skips a test it adds) is refused with the same test changes as when that module is
the repository's top, only named with the module's folder. Real git and the real `go test` (offline), through the
gate service as the task's turns, the merge queue and `land` call it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from orchestrator.cli.demo import make_sample_repo
from orchestrator.facts import GateResult
from orchestrator.gate.spec import shifted
from tests.graph.harness import judged, plan, task
from tests.graph.test_native_gates import ARC, TOP

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="go is installed by make install")

BROKEN = "package arc\n\nfunc Pack(n int) int { return n * 3 }\n"
TEST = ARC["arc/arc_test.go"]
CHEATS: dict[str, dict[str, str | None]] = {
    "the test rewritten to the broken output": {"arc/arc_test.go": TEST.replace("!= 6", "!= 9")},
    "the test deleted": {"arc/arc_test.go": None},
    "the test skipped": {"arc/arc_test.go": TEST.replace("\tif Pack(3)", "\tt.Skip(\"later\")\n\tif Pack(3)")},
    "a skipped test added": {"arc/more_test.go": "package arc\n\nimport \"testing\"\n\nfunc TestMore(t *testing.T) {"
                                                 "\n\tt.Skip(\"later\")\n}\n"},
}


def at_top(files: dict[str, str | None]) -> dict[str, str | None]:
    return {path.removeprefix("arc/"): text for path, text in files.items()}


def named(result: GateResult) -> list[tuple[Any, ...]]:
    """The test changes and unverified work, the module's folder taken out of their names."""
    def plain(text: object) -> str:
        return str(text).replace("arc::", "").replace("arc/", "")
    changes = [(plain(c["test"]), c["fate"], plain(c["detail"]), plain(c["file"]))
               for c in result["test_changes"] or []]
    return sorted(changes) + sorted(("unverified", plain(entry)) for entry in result.get("unverified") or [])


# All heavy: `make test` keeps a nested module's plain break (tests/graph/test_native_gates.py) and the accounting's
# rewritten expectation at the top (tests/graph/test_tests_are_spec.py), so it stays under 5 minutes.
@pytest.mark.heavy
@pytest.mark.parametrize("cheat", list(CHEATS))
async def test_a_bent_test_in_a_nested_module_is_refused_as_at_the_top(tmp_path: Path, cheat: str) -> None:
    nested = make_sample_repo(tmp_path / "nested", files={**TOP, **ARC, "Makefile": "test:\n\tgo test ./...\n"},
                              plan=plan(task("TASK-001"), verify=None), venv=False)
    top = make_sample_repo(tmp_path / "top", files={**at_top(dict(ARC)), "Makefile": "test:\n\tgo test ./...\n"},
                           plan=plan(task("TASK-001"), verify=None), venv=False)
    at_the_top = await judged(top, at_top({"arc/arc.go": BROKEN, **CHEATS[cheat]}))
    in_the_module = await judged(nested, {"arc/arc.go": BROKEN, **CHEATS[cheat]})
    assert not at_the_top["passed"] and at_the_top["test_changes"], at_the_top["summary"]
    assert not in_the_module["passed"], in_the_module["summary"]
    assert named(in_the_module) == named(at_the_top), in_the_module["summary"]


TABLE = ("package arc\n\nimport \"testing\"\n\nfunc TestTable(t *testing.T) {\n"
         "\tfor _, c := range []struct{ n, want int }{\n\t\t{3, 6},\n\t\t{0, 0},\n\t\t{1, 2},\n\t} {\n"
         "\t\tt.Run(\"case\", func(t *testing.T) {\n\t\t\tif Pack(c.n) != c.want {\n\t\t\t\tt.Fatal(c)\n"
         "\t\t\t}\n\t\t})\n\t}\n}\n")


@pytest.mark.heavy  # a second case of a family `make test` already runs (tests/graph/test_shifting_ids.py)
async def test_a_dropped_table_case_in_a_nested_module_is_shown_by_its_table_diff(tmp_path: Path) -> None:
    """Go numbers duplicate subtests (`case#02`): a dropped case shifts the ids, so the feedback shows the table's
    diff, in a nested module's folder as at the top."""
    nested = make_sample_repo(tmp_path / "nested", files={**TOP, **ARC, "arc/table_test.go": TABLE,
                                                          "Makefile": "test:\n\tgo test ./...\n"},
                              plan=plan(task("TASK-001"), verify=None), venv=False)
    result = await judged(nested, {"arc/arc.go": BROKEN, "arc/table_test.go": TABLE.replace("\t\t{3, 6},\n", "")})
    assert not result["passed"], result["summary"]
    assert "arc::example.com/arc.TestTable/case#02: gone" in result["summary"], result["summary"]
    assert shifted.NOTE in result["output"]
    assert "-\t\t{3, 6},\n" in result["output"], result["output"][:3000]
