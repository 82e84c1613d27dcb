"""Which command gates a Go, Rust or C repo: a nested Go module that `go test ./...` at the top doesn't enter is
gated in its own folder, unless go.work or the maintainers' file reaches it; CI's ctest step beats a Makefile
target that only builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.gate.choose.detect import detect_test_command


def repo_with(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


GO_TOP = {"go.mod": "module example.com/top\n", "arc/go.mod": "module example.com/arc\n",
          "arc/arc_test.go": "package arc\n"}


def test_a_nested_go_module_under_a_makefile_is_gated_in_its_own_folder(tmp_path: Path) -> None:
    choice = detect_test_command(repo_with(tmp_path, {**GO_TOP, "Makefile": "test:\n\tgo test ./...\n"}))
    assert [(p["path"], p["command"]) for p in choice.packages] == [(".", "make test"), ("arc", "go test ./...")]
    assert "not entered by `go test ./...`" in choice.source
    assert not any("run by the top's command" in other for other in choice.also)


@pytest.mark.parametrize("reach", [{"Makefile": "test:\n\tgo test ./...\n\tcd arc && go test ./...\n"},
                                   {"Makefile": "test:\n\tgo test ./... ./arc/...\n", "go.work": "go 1.19\n\nuse (\n"
                                                                                         "\t.\n\t./arc\n)\n"}])
def test_a_nested_go_module_the_top_reaches_stays_with_the_top(tmp_path: Path, reach: dict[str, str]) -> None:
    choice = detect_test_command(repo_with(tmp_path, {**GO_TOP, **reach}))
    assert choice.command == "make test" and not choice.packages
    assert "`go test ./...` in arc/ (go.mod; run by the top's command, not alone)" in choice.also


def test_a_nested_go_module_with_no_test_file_of_its_own_is_not_gated(tmp_path: Path) -> None:
    """A module of tools (`tools.go` with build tags, generated code): `go test ./...` there tests nothing, or
    fetches its requirements, and refused an offline run on the base. Test files `go test` skips don't count."""
    tools = {"tools/go.mod": "module example.com/tools\n\nrequire golang.org/x/tools v0.1.12\n",
             "tools/tools.go": "//go:build tools\n\npackage tools\n", "tools/testdata/x_test.go": "package x\n",
             "tools/_old/y_test.go": "package y\n", "tools/vendor/v/v_test.go": "package v\n",
             "tools/sub/go.mod": "module example.com/sub\n", "tools/sub/z_test.go": "package sub\n"}
    choice = detect_test_command(repo_with(tmp_path, {**GO_TOP, **tools, "Makefile": "test:\n\tgo test ./...\n"}))
    assert [(p["path"], p["command"]) for p in choice.packages] == [(".", "make test"), ("arc", "go test ./...")]
    (tmp_path / "tools" / "cmd").mkdir()
    (tmp_path / "tools" / "cmd" / "gen_test.go").write_text("package cmd\n")  # one of its own: gated again
    choice = detect_test_command(tmp_path)
    assert [p["path"] for p in choice.packages] == [".", "arc", "tools"]


BUILD_ONLY = "CC ?= cc\n\ntests: test_mul\n\ntest_mul: tests/test_mul.c calc.c\n\t$(CC) -o $@ $^\n"
CMAKE_CI = """name: CI
on: [push]
env:
  BUILD_TYPE: Release
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: deps
        run: sudo apt-get install -y cmake
      - name: Configure CMake
        run: cmake -B ${{github.workspace}}/build -DCMAKE_BUILD_TYPE=${{env.BUILD_TYPE}}
      - name: Build
        run: cmake --build ${{github.workspace}}/build --config ${{env.BUILD_TYPE}}
      - name: Test
        working-directory: ${{github.workspace}}/build
        run: ctest -C ${{env.BUILD_TYPE}} --output-on-failure
"""


def test_cis_ctest_step_with_its_build_beats_a_makefile_target_that_only_builds(tmp_path: Path) -> None:
    choice = detect_test_command(repo_with(tmp_path, {"Makefile": BUILD_ONLY, ".github/workflows/ci.yml": CMAKE_CI,
                                                      "CMakeLists.txt": "enable_testing()\n"}))
    assert choice.command == ("cmake -B ./build -DCMAKE_BUILD_TYPE=Release && cmake --build ./build --config Release"
                              " && (cd ./build && ctest -C Release --output-on-failure)")
    assert choice.source == ".github/workflows/ci.yml test step (its build steps before it)"
    assert "`make tests` (Makefile tests target; it only builds)" in choice.also


def test_a_makefile_target_that_runs_something_stays_first(tmp_path: Path) -> None:
    runs = BUILD_ONLY.replace("tests: test_mul\n", "tests: test_mul\n\t./test_mul\n")
    choice = detect_test_command(repo_with(tmp_path, {"Makefile": runs, ".github/workflows/ci.yml": CMAKE_CI}))
    assert choice.command == "make tests"


def test_a_ctest_step_after_cd_runs_in_that_folder(tmp_path: Path) -> None:
    ci = ("jobs:\n  t:\n    steps:\n      - run: mkdir build && cd build && cmake .. && make\n"
          "      - run: cd build && ctest\n")
    choice = detect_test_command(repo_with(tmp_path, {".github/workflows/ci.yml": ci}))
    assert choice.command == "(mkdir build && cd build && cmake .. && make) && (cd build && ctest)"


def test_another_ci_steps_working_directory_does_not_reach_a_nested_module(tmp_path: Path) -> None:
    """hashicorp/golang-lru: CI tests arc/ in a step of its own, which the gate (the first test step) doesn't run."""
    ci = ("jobs:\n  build:\n    steps:\n      - run: go test -v ./...\n      - working-directory: ./arc\n"
          "        run: go test\n")
    choice = detect_test_command(repo_with(tmp_path, {**GO_TOP, ".github/workflows/ci.yml": ci}))
    assert [(p["path"], p["command"]) for p in choice.packages] == [(".", "go test -v ./..."), ("arc", "go test ./...")]


def test_a_cmake_project_with_tests_is_gated_by_ctest_over_a_build_only_target(tmp_path: Path) -> None:
    """DaveGamble/cJSON: `make tests` only builds, CI's step is a shell script with conditionals; CMake has tests."""
    cmake = "project(x C)\nif(ENABLE_TEST)\n    enable_testing()\n    add_test(NAME t COMMAND t)\nendif()\n"
    choice = detect_test_command(repo_with(tmp_path, {"Makefile": BUILD_ONLY, "CMakeLists.txt": cmake}))
    assert choice.command == "cmake -S . -B build && cmake --build build && (cd build && ctest)"
    assert choice.source == "CMakeLists.txt (enable_testing: ctest)"
    assert detect_test_command(repo_with(tmp_path / "plain", {"CMakeLists.txt": "project(x C)\n"})).command is None


def test_a_ci_build_step_keeps_its_build_lines_when_another_line_is_not_a_build_tool(tmp_path: Path) -> None:
    """libuv/libuv (6179e7af8): its macOS job's Build step is `cmake --build build` then `ls -lh`; the step was
    dropped, so ctest ran on a build folder only configured (every test "Not Run")."""
    workflow = (Path(__file__).resolve().parents[1] / "fixtures" / "gate" / "ci" / "libuv-CI-unix.yml").read_text()
    cmake = "project(libuv C)\ninclude(CTest)\nadd_test(NAME uv_test COMMAND uv_run_tests)\n"
    choice = detect_test_command(repo_with(tmp_path, {".github/workflows/CI-unix.yml": workflow,
                                                      "CMakeLists.txt": cmake}))
    assert choice.command == ("cmake -B build -DBUILD_TESTING=ON -G Ninja && cmake --build build"
                              " && (cd build && ctest -V)")


def test_a_ci_step_that_only_makes_its_build_folder_is_kept(tmp_path: Path) -> None:
    ci = ("jobs:\n  t:\n    steps:\n      - run: |\n          sudo apt-get install -y ninja-build\n"
          "          mkdir build\n"
          "      - working-directory: build\n        run: |\n          cmake .. -G Ninja\n          echo configured\n"
          "      - run: ninja -C build\n      - run: cd build && ctest\n")
    choice = detect_test_command(repo_with(tmp_path, {".github/workflows/ci.yml": ci}))
    assert choice.command == "mkdir build && (cd build && cmake .. -G Ninja) && ninja -C build && (cd build && ctest)"
