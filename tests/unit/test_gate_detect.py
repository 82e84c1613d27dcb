"""Which command gates a repo found from its files: the maintainers' own first (Makefile, tox, nox, a package.json
script, a CI step), a guess last, what else was found; monorepos per package, and which packages a change
touches. Layouts follow real repos (Python-Markdown's makefile/tox/CI, itsdangerous's tox in pyproject.toml)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.gate.choose.detect import detect_test_command
from orchestrator.gate.choose.maintainers import is_runner, normalize
from orchestrator.gate.choose.monorepo import affected, find_packages
from orchestrator.gate.prepare.environment import default_setup
from orchestrator.gate.prepare.pyenv import editables
from orchestrator.gate.report import judged_by
from tests import schemas
from tests.cli_in_process import cli_in_process
from tests.conftest import CliRun

PYTEST_GUESS = {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n", "tests/test_x.py": ""}
MARKDOWN_TOX = """[tox]
envlist = py{310, 311}, flake8

[testenv]
extras = testing
deps = pytidylib
commands =
    coverage run --source=markdown -m unittest discover {toxinidir}/tests
    coverage xml

[testenv:flake8]
commands = flake8 {toxinidir}/markdown {toxinidir}/tests
"""
CI = """name: tests
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: python -m pip install --upgrade pip pytest
      - run: echo ${{ matrix.python }}
      - name: Test
        run: |
          pip install -e .
          python -m pytest -q tests
"""


def repo_with(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def python_of(command: str | None) -> str:
    return str(command).replace("python3 ", "python ")  # `python` where the environment has one


def test_a_makefile_test_target_wins_over_a_guess_and_the_guess_is_still_shown(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {**PYTEST_GUESS, "Makefile": "test:\n\tpython -m unittest discover tests\n"})
    choice = detect_test_command(repo)
    assert choice.command == "make test" and choice.source == "Makefile test target" and choice.detected
    assert any("pytest" in other and "pyproject.toml" in other for other in choice.also)


def test_tox_commands_run_in_the_repos_env_before_a_guess_and_a_makefile_handing_over_to_tox(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {**PYTEST_GUESS, "tox.ini": MARKDOWN_TOX})
    choice = detect_test_command(repo)
    assert python_of(choice.command) == "python -m unittest discover tests", "coverage and {toxinidir} dropped"
    assert choice.source == "tox.ini [testenv] commands"
    (repo / "Makefile").write_text("test:\n\t@tox -e py311\n")
    handed = detect_test_command(repo)
    assert python_of(handed.command) == "python -m unittest discover tests" and "runs tox" in handed.source


def test_tox_in_pyproject_toml_and_nox_sessions_are_read(tmp_path: Path) -> None:
    tox = ('[tool.tox.env_run_base]\ncommands = [["pytest", "-v", "--basetemp={env_tmp_dir}",'
           ' {replace = "posargs", default = ["tests"], extend = true}]]\n')
    repo = repo_with(tmp_path / "a", {"pyproject.toml": tox})
    choice = detect_test_command(repo)
    assert python_of(choice.command) == "python -m pytest -v tests" and "[tool.tox]" in choice.source
    nox = ("import nox\n\n@nox.session\ndef lint(session):\n    session.run('ruff', 'check')\n\n"
           "@nox.session(python=['3.11'])\ndef tests(session):\n    session.install('-e', '.')\n"
           "    session.run('pytest', '-x', *session.posargs)\n")
    choice = detect_test_command(repo_with(tmp_path / "b", {"noxfile.py": nox}))
    assert python_of(choice.command) == "python -m pytest -x" and choice.source == "noxfile.py session tests"


def test_a_ci_workflows_test_step_beats_a_guess_but_installs_and_expressions_are_not_tests(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {".github/workflows/ci.yml": CI, "go.mod": "module x\n"})
    choice = detect_test_command(repo)
    assert python_of(choice.command) == "python -m pytest -q tests"
    assert choice.source == ".github/workflows/ci.yml test step" and "`go test ./...` (go.mod)" in choice.also
    # A step that tests one folder (`cd backend && pytest`, `working-directory:`) is not the repo's command.
    (repo / ".github/workflows/ci.yml").write_text(CI.replace("pip install -e .", "cd backend && pip install -e ."))
    assert detect_test_command(repo).command == "go test ./..."


@pytest.mark.parametrize(("line", "runs_tests"), [
    ("python -m pytest -q", True), ("pytest", True), ("npm test", True), ("npm run test", True),
    ("pnpm test", True), ("cargo test --workspace", True), ("go test ./...", True), ("make test", True),
    ("CI=1 npm test", True), ("node --test", True), ("python runtests.py", True), ("tox -e py311", True),
    ("pip install pytest", False), ("python -m pip install pytest", False), ("npm ci", False),
    ("cargo build", False), ("echo pytest", False), ("make lint", False), ("npm run lint", False),
    ("make -C tests EXTRA_CFLAGS=-W", True), ("make -Ctests", True), ("make -C doc", False),
    ("python test_gnupg.py -v", True), ("python tests/calc_test.py", True), ("python scripts/gen_docs.py", False),
])
def test_a_test_step_is_told_by_what_it_runs(line: str, runs_tests: bool) -> None:
    assert is_runner(line) is runs_tests


def test_commands_are_normalised_to_the_repos_environment() -> None:
    assert normalize("uv run --locked pytest -x", "python") == "python -m pytest -x"
    assert normalize("coverage run --source=markdown -m unittest discover tests", "python3") == \
        "python3 -m unittest discover tests"
    assert normalize("python ${{ matrix.args }}", "python") is None


def monorepo(tmp_path: Path) -> Path:
    """npm workspaces (web depends on ui) plus a Python backend beside them, a pnpm lock at the top."""
    def node(name: str, deps: dict[str, str] | None = None) -> str:
        return json.dumps({"name": name, "scripts": {"test": "node --test"}, "dependencies": deps or {}})

    return repo_with(tmp_path, {
        "package.json": json.dumps({"name": "root", "private": True, "workspaces": ["packages/*"],
                                    "scripts": {"test": "npm test -w web"}}),
        "pnpm-lock.yaml": "",
        "packages/ui/package.json": node("@acme/ui"),
        "packages/web/package.json": node("@acme/web", {"@acme/ui": "*"}),
        "packages/docs-only/package.json": json.dumps({"name": "docs-only"}),
        "backend/pyproject.toml": "[project]\nname = 'backend'\n[tool.pytest.ini_options]\n",
        "backend/tests/test_api.py": "",
        "node_modules/dep/package.json": node("dep"),
    })


def test_a_monorepo_is_gated_per_package_with_its_own_command_and_the_top_script_is_only_mentioned(
        tmp_path: Path) -> None:
    choice = detect_test_command(monorepo(tmp_path))
    packages = {p["path"]: p for p in choice.packages}
    assert sorted(packages) == ["backend", "packages/ui", "packages/web"], "no tests: no package; node_modules never"
    assert python_of(packages["backend"]["command"]) == "python -m pytest"
    assert packages["packages/web"]["command"] == "pnpm test", "the top's lockfile names the package manager"
    assert packages["packages/web"]["depends_on"] == ["packages/ui"]
    assert choice.detected and "3 package(s)" in choice.source and choice.describe().startswith("per package")
    assert any("npm test -w web" not in other and "package.json test script" in other for other in choice.also)
    assert "(cd backend && " in str(choice.command) and str(choice.command).endswith("exit $rc")


def test_a_change_gates_its_packages_and_their_dependents_and_a_top_file_gates_all(tmp_path: Path) -> None:
    packages = find_packages(monorepo(tmp_path))
    assert affected(packages, ["backend/app.py"]) == ["backend"]
    assert affected(packages, ["packages/ui/index.js"]) == ["packages/ui", "packages/web"], "web depends on ui"
    assert affected(packages, ["packages/web/index.js"]) == ["packages/web"]
    assert affected(packages, ["pnpm-lock.yaml"]) == ["backend", "packages/ui", "packages/web"]
    assert affected(packages, None) == ["backend", "packages/ui", "packages/web"]


def test_a_cargo_workspace_is_one_package_and_a_nested_go_module_is_its_own(tmp_path: Path) -> None:
    cargo = repo_with(tmp_path / "cargo", {"Cargo.toml": "[workspace]\nmembers = ['crates/*']\n",
                                          "crates/a/Cargo.toml": "[package]\nname = 'a'\n",
                                          "crates/b/Cargo.toml": "[package]\nname = 'b'\n"})
    choice = detect_test_command(cargo)
    assert choice.command == "cargo test" and not choice.packages
    go = repo_with(tmp_path / "go", {"go.mod": "module example.com/top\n",
                                     "tools/gen/go.mod": "module example.com/gen\n", "tools/gen/gen_test.go": ""})
    choice = detect_test_command(go)
    assert [(p["path"], p["command"]) for p in choice.packages] == [(".", "go test ./..."),
                                                                   ("tools/gen", "go test ./...")]


def test_a_node_package_outside_a_workspace_gets_its_own_clean_install(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"frontend/package.json": json.dumps({"devDependencies": {"x": "1"},
                                                                       "scripts": {"test": "jest"}}),
                                "frontend/package-lock.json": "{}", "backend/pyproject.toml": "[tool.pytest]\n"})
    (repo / "frontend" / "node_modules").mkdir()  # the main checkout's: not on a worktree's way up
    assert default_setup(repo, ["backend", "frontend"]) == "(cd frontend && npm ci --no-audit --no-fund)"


def test_validate_and_dry_run_show_the_gate_per_package_its_judgement_setup_and_a_missing_tool(
        tmp_path: Path) -> None:
    repo = monorepo(tmp_path / "repo")
    (repo / "packages/web/package.json").write_text(json.dumps({"name": "@acme/web", "dependencies": {"@acme/ui": "*"},
                                                                "scripts": {"test": "acme-runner-not-installed"}}))
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    (repo / ".autobuild/features").mkdir(parents=True)
    (repo / ".autobuild/features/FEAT-001.yaml").write_text(
        "id: FEAT-001\nname: F\nsetup: acme-setup-not-installed\ntasks:\n  - {id: TASK-001, name: T, complexity: 2}\n")

    def cli(*args: str) -> CliRun:
        return cli_in_process(tmp_path, *args, "--repo", str(repo))

    gate = schemas.valid("validate", cli("validate", "FEAT-001", "--json").stdout)["gate"]
    rows = {row["path"]: row for row in gate["packages"]}
    assert sorted(rows) == ["backend", "packages/ui", "packages/web"] and gate["detected"]
    assert "by test id: pytest" in rows["backend"]["judged_by"]
    assert "by test id: node --test" in rows["packages/ui"]["judged_by"]
    assert rows["packages/web"]["depends_on"] == ["packages/ui"]
    assert any("at the top: not split" in other for other in gate["also_found"])
    dry = schemas.valid("dry-run", cli("run", "FEAT-001", "--dry-run", "--json").stdout)["gate"]
    assert dry["packages"] == gate["packages"]
    assert rows["packages/web"]["missing_tools"] == ([] if shutil.which("pnpm") else ["pnpm"])
    assert "acme-setup-not-installed" in gate["missing_tools"]
    text = cli("validate", "FEAT-001").stdout
    assert "    backend: `python" in text and "judged by test id" in text
    assert "worktree setup: acme-setup-not-installed" in text and "missing on PATH:" in text
    assert "acme-setup-not-installed" in text.split("missing on PATH:")[1]
    assert not (repo / ".autobuild" / "worktrees").exists(), "nothing was written"


BACKEND_FRONTEND = {"backend/pyproject.toml": "[project]\nname = 'api'\n[tool.pytest.ini_options]\n",
                    "backend/tests/test_api.py": "",
                    "frontend/package.json": json.dumps({"name": "web", "scripts": {"test": "vitest run"}})}


def test_backend_and_frontend_with_nothing_at_the_top_are_both_found(tmp_path: Path) -> None:
    choice = detect_test_command(repo_with(tmp_path, BACKEND_FRONTEND))
    assert [(p["path"], python_of(p["command"])) for p in choice.packages] == [
        ("backend", "python -m pytest"), ("frontend", "npm test")]


def test_a_maintainers_makefile_at_the_top_stays_the_one_gate_and_names_the_packages_it_covers(
        tmp_path: Path) -> None:
    makefile = "test:\n\tcd backend && pytest\n\tcd frontend && npm test\n"
    choice = detect_test_command(repo_with(tmp_path, {**BACKEND_FRONTEND, "Makefile": makefile}))
    assert choice.command == "make test" and not choice.packages
    assert any("in backend/" in o for o in choice.also) and any("in frontend/" in o for o in choice.also)


def test_a_top_level_node_app_beside_a_python_backend_is_a_package_of_its_own(tmp_path: Path) -> None:
    files = {**BACKEND_FRONTEND, "package.json": json.dumps({"scripts": {"test": "jest"}})}
    del files["frontend/package.json"]
    choice = detect_test_command(repo_with(tmp_path, files))
    assert [p["path"] for p in choice.packages] == [".", "backend"]
    packages = list(choice.packages)
    assert affected(packages, ["backend/api.py"]) == ["backend"]
    assert affected(packages, ["src/app.js"]) == [".", "backend"], "the top's files touch every package"


def test_editable_installs_of_every_style_are_found_in_a_venvs_files(tmp_path: Path) -> None:
    """Files as pip/setuptools write them (measured in tests/graph/test_gate_env.py with a real pip): path
    lines, legacy easy-install.pth + egg-link, a finder's MAPPING; entries outside the repo are left alone."""
    root = tmp_path / "repo"
    site = root / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "__editable__.calc-0.1.pth").write_text(f"{root}/pkg/src\n")
    (site / "easy-install.pth").write_text(f"{root}/legacy\n/usr/lib/elsewhere\n")
    (site / "legacy.egg-link").write_text(f"{root}/legacy\n.\n")
    finder = "__editable___mathx_0_1_finder"
    (site / "__editable__.mathx-0.1.pth").write_text(f"import {finder}; {finder}.install()\n")
    (site / "__editable___mathx_0_1_finder.py").write_text(
        f"import sys\nMAPPING: dict[str, str] = {{'mathx': '{root}/weird/lib/mathx', 'out': '/opt/out'}}\n")
    (site / "_virtualenv.pth").write_text("import _virtualenv\n")
    (site / "_editable_impl_hx.py").write_text(
        f"from editables.redirector import RedirectingFinder as F\nF.install()\n"
        f"F.map_module('hx', '{root}/hx/src/hx/__init__.py')\n")
    found = {(e.kind, str(e.relative(root)), e.module) for e in editables(root, root / ".venv")}
    assert found == {("path", "pkg/src", None), ("path", "legacy", None), ("finder", "weird/lib/mathx", "mathx"),
                     ("finder", "hx/src/hx", "hx")}


def test_validate_says_a_runner_naming_no_passing_test_is_accounted_by_count(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"scripts": {"test": "craco test"}}')
    assert "passing tests accounted by count (craco starts its runner through an API" in judged_by("npm test", tmp_path)
    assert "accounted by count" not in judged_by("python -m pytest -q", tmp_path)


def test_validate_says_jest_vitest_and_mocha_are_judged_by_test_id_through_the_gates_reporter(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"scripts": {"test": "jest --ci"}}')
    assert "by test id: jest, passes included" in judged_by("npm test", tmp_path)
    assert "by test id: vitest" in judged_by("npx vitest run")
    assert "accounted by count" not in judged_by("npx mocha")


def test_validate_names_each_runner_whose_passing_tests_the_gate_reads_by_id(tmp_path: Path) -> None:
    """What `validate` says matches what the gate's runs do (stop 37: `python -m unittest` was said to be judged
    by exit status while its runs were judged by test id)."""
    assert judged_by("python -m unittest").startswith("by test id: unittest, subTests included")
    assert judged_by("go test ./...").startswith("by test id: go test, subtests included")
    assert judged_by("cargo +nightly test --workspace").startswith("by test id: cargo test")
    assert judged_by("ctest --test-dir build").startswith("by test id: ctest")
    assert judged_by("node --test-reporter=spec --test") == ("by test id: node --test (its TAP and JUnit through"
                                                              " NODE_OPTIONS)")
    (tmp_path / "package.json").write_text('{"scripts": {"test": "tsc && npm run test-api",'
                                           ' "test-api": "node --conditions development test.js"}}')
    assert "node where it runs node:test" in judged_by("npm run test-api", tmp_path)
    assert "node where it runs node:test" in judged_by("npm test", tmp_path), "read through the scripts it runs"
    assert judged_by("make test", tmp_path).startswith("by test id where the runner it starts reports them")
    assert judged_by("./run-tests.sh").startswith("by exit status, and failure counts where the output has them: no"
                                                  " runner reports on the gate's per-test channel")


def test_a_top_level_test_module_run_by_tox_as_a_script_is_the_gate(tmp_path: Path) -> None:
    """vsajip/python-gnupg (32a9abb): tox runs `{envpython} test_gnupg.py` (CI: `python test_gnupg.py -v`); no
    tests folder, no pytest configuration: no gate was found."""
    tox = (Path(__file__).resolve().parents[1] / "fixtures" / "gate" / "python-gnupg" / "tox.ini").read_text()
    repo = repo_with(tmp_path, {"tox.ini": tox, "gnupg.py": "", "test_gnupg.py": "import unittest\n"})
    choice = detect_test_command(repo)
    assert (python_of(choice.command), choice.source) == ("python test_gnupg.py", "tox.ini [testenv] commands")


def test_top_level_test_modules_alone_are_found(tmp_path: Path) -> None:
    repo = repo_with(tmp_path / "unittest", {"calc.py": "", "test_calc.py": "import unittest\n"})
    choice = detect_test_command(repo)
    assert choice.command is not None and choice.source.startswith("Python test modules at the top (test_calc.py)")
    only_tests = repo_with(tmp_path / "tests_py", {"calc.py": "", "tests.py": "import unittest\n"})
    assert "unittest discover -s . -p 'test*.py'" in str(detect_test_command(only_tests).command)
    assert detect_test_command(repo_with(tmp_path / "none", {"calc.py": "", "testing.py": ""})).command is None
