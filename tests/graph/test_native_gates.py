"""Go, Rust and C gates on the compiled graphs with scripted agents and the real toolchains (offline): a nested Go
module gated in its own folder, ctest's named tests, cargo's cheat matrix (heavy), Go's table-driven subtests."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.native_cheats import GO_TABLE, GO_TABLE_CHEATS
from tests.graph.harness import Run, Workflow, plan, task
from tests.graph.warm_go import seed_gate_cache

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go is installed by make install")


def gates_of(run: Run) -> list[dict[str, Any]]:
    return [event for event in run.events if event["event"] == "gate"]


ARC = {"arc/go.mod": "module example.com/arc\n\ngo 1.19\n",
       "arc/arc.go": "package arc\n\nfunc Pack(n int) int { return n * 2 }\n",
       "arc/arc_test.go": "package arc\n\nimport \"testing\"\n\nfunc TestPack(t *testing.T) {\n\tif Pack(3) != 6 {\n"
                          "\t\tt.Fatal(\"want 6\")\n\t}\n}\n"}
TOP = {"go.mod": "module example.com/top\n\ngo 1.19\n",
       "top.go": "package top\n\nfunc One() int { return 1 }\n",
       "top_test.go": "package top\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n"
                      "\t\tt.Fatal(\"want 1\")\n\t}\n}\n"}


@needs_go
async def test_a_break_in_a_nested_go_module_under_a_makefile_gate_is_refused(tmp_path: Path) -> None:
    """`go test ./...` never enters a nested module: the maintainers' `make test` stays the top's gate and the
    module is gated in its own folder."""
    files = {**TOP, **ARC, "Makefile": "test:\n\tgo test ./...\n"}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify=None), venv=False)
    seed_gate_cache(repo)
    broken: dict[str, str | None] = {"arc/arc.go": "package arc\n\nfunc Pack(n int) int { return n * 3 }\n"}
    run = await Workflow(repo, ScriptedAgents({"player": writes(broken), "coach": approve()})).run(max_turns=1)
    gate = gates_of(run)[0]
    assert not gate["passed"], gate["summary"]
    assert "arc::example.com/arc.TestPack" in (gate["failing"] or []), gate["summary"]
    assert "not touched by the change: ." in gate["summary"], "the top's make test is not re-run for arc/"
    assert run.status("TASK-001") == "failed"


needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ctest") is None,
                                 reason="needs cmake and ctest")
CMAKE = {".gitignore": "build/\n",
         "CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(calc C)\nenable_testing()\n"
                           "add_library(calc calc.c)\nadd_executable(test_mul tests/test_mul.c)\n"
                           "target_link_libraries(test_mul calc)\nadd_test(NAME mul COMMAND test_mul mul)\n"
                           "add_test(NAME zero COMMAND test_mul zero)\n",
         "calc.c": "int mul(int a, int b) { return a * b; }\n",
         "tests/test_mul.c": "#include <stdio.h>\n#include <string.h>\nint mul(int, int);\n"
                             "int main(int argc, char **argv) {\n  if (argc < 2) return 2;\n"
                             "  if (!strcmp(argv[1], \"mul\") && mul(2, 3) != 6) {"
                             " printf(\"mul(2, 3) = %d, want 6\\n\", mul(2, 3)); return 1; }\n"
                             "  if (!strcmp(argv[1], \"zero\") && mul(0, 3) != 0) return 1;\n"
                             "  return 0;\n}\n"}
DIV = "int div(int a, int b) { return a / b; }\n"
CMAKE_BROKEN = "int mul(int a, int b) { return (a == 2 && b == 3) ? 7 : a * b; }\n"
CTEST = "cmake -S . -B build >/dev/null && cmake --build build >/dev/null && ctest --test-dir build"


@needs_cmake
@pytest.mark.heavy  # a second case of a family `make test` already runs: kept under 5 minutes
async def test_ctest_names_a_failing_test_and_a_dropped_add_test_by_its_line(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CMAKE, plan=plan(task("TASK-001"), verify=CTEST), venv=False)
    dropped = CMAKE["CMakeLists.txt"].replace("add_test(NAME mul COMMAND test_mul mul)\n", "")
    agents = ScriptedAgents({("player", "TASK-001", 1): writes({"calc.c": CMAKE_BROKEN}),
                             ("player", "TASK-001", 2): writes({"calc.c": CMAKE_BROKEN, "CMakeLists.txt": dropped}),
                             ("player", "TASK-001", 3): writes({"calc.c": CMAKE["calc.c"] + DIV,
                                                                "CMakeLists.txt": CMAKE["CMakeLists.txt"]}),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=3)
    first, second = gates_of(run)[:2]
    assert first["runner"] == "ctest" and first["failing"] == ["mul"], first["summary"]
    assert "mul(2, 3) = 7, want 6" in first["output"]
    assert "mul: gone: deselected by CMakeLists.txt:6" in second["summary"], second["summary"]



CI_CTEST = ("name: CI\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: actions/checkout@v4\n      - run: cmake -B build\n      - run: cmake --build build\n"
            "      - run: cd build && ctest --output-on-failure\n")


@needs_cmake
async def test_a_makefile_target_that_only_builds_gives_way_to_cis_ctest(tmp_path: Path) -> None:
    """The maintainers' CI runs CMake and ctest: that is the gate, not `make tests` (which only builds)."""
    files = {**CMAKE, ".github/workflows/ci.yml": CI_CTEST,
             "Makefile": "CC ?= cc\n\ntests: test_mul\n\ntest_mul: tests/test_mul.c calc.c\n\t$(CC) -o $@ $^\n"}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify=None), venv=False)
    agents = ScriptedAgents({"player": writes({"calc.c": CMAKE_BROKEN}), "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=1)
    gate = gates_of(run)[0]
    assert gate["command"].endswith("(cd build && ctest --output-on-failure)"), gate["command"]
    assert gate["failing"] == ["mul"] and not gate["passed"]
    assert run.status("TASK-001") == "failed"


@needs_go
@pytest.mark.parametrize("name", [pytest.param(name, marks=[] if name == "a table case dropped" else
                                               [pytest.mark.heavy]) for name in sorted(GO_TABLE_CHEATS)])
async def test_go_table_driven_cases_are_accounted_by_subtest(tmp_path: Path, name: str) -> None:
    files, named = GO_TABLE_CHEATS[name]
    repo = make_sample_repo(tmp_path / "repo", files=GO_TABLE, plan=plan(task("TASK-001"), verify="go test ./..."),
                            venv=False)
    seed_gate_cache(repo)
    run = await Workflow(repo, ScriptedAgents({"player": writes(files), "coach": approve()})).run(max_turns=1)
    gate = gates_of(run)[0]
    assert not gate["passed"] and named in gate["summary"], gate["summary"]
    assert run.status("TASK-001") == "failed"


@needs_go
@pytest.mark.heavy  # a second case of a family `make test` already runs: kept under 5 minutes
async def test_a_bent_test_in_a_nested_go_module_is_accounted_in_its_package(tmp_path: Path) -> None:
    """Per package, every test that passed in the package's base run must pass in its run on the tree."""
    files = {**TOP, **ARC, "Makefile": "test:\n\tgo test ./...\n"}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify=None), venv=False)
    seed_gate_cache(repo)
    skipped = ARC["arc/arc_test.go"].replace("\tif Pack(3) != 6 {", "\tt.Skip(\"later\")\n\tif Pack(3) != 6 {")
    bent: dict[str, str | None] = {"arc/arc.go": "package arc\n\nfunc Pack(n int) int { return n * 3 }\n",
                                   "arc/arc_test.go": skipped}
    run = await Workflow(repo, ScriptedAgents({"player": writes(bent), "coach": approve()})).run(max_turns=1)
    gate = gates_of(run)[0]
    assert not gate["passed"], gate["summary"]
    assert "arc::example.com/arc.TestPack: skipped" in gate["summary"], gate["summary"]
    change = next(c for c in gate["test_changes"] if c["fate"] == "skipped")
    assert change["file"] == "arc/arc_test.go"
    assert run.status("TASK-001") == "failed"
