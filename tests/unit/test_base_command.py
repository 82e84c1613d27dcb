"""The gate's command as the base defines it: which config decides it, and what runs when the task edited it."""

from __future__ import annotations

import json

import pytest

from orchestrator.gate.choose.base_command import config_files, resolve


def package(**scripts: str) -> str:
    return json.dumps({"name": "calc", "scripts": scripts})


BASE = package(test="node --test", pretest="eslint .", unit="vitest run")
NARROWED = package(test="node --test test/zero.test.js", pretest="eslint .", unit="vitest")


@pytest.mark.parametrize(("command", "files"), [
    ("npm test", ["package.json"]), ("CI=1 yarn run unit", ["package.json"]), ("pnpm unit", ["package.json"]),
    ("make test", ["GNUmakefile", "makefile", "Makefile"]), ("python -m tox -e py", ["tox.ini"]),
    ("nox -s tests", ["noxfile.py"]), ("cd web && npm test", []), ("python -m pytest -q", []),
])
def test_the_config_that_decides_a_command(command: str, files: list[str]) -> None:
    assert config_files(command) == files


def test_npm_runs_the_bases_script_with_its_pre_and_post_scripts() -> None:
    resolved = resolve("npm test -- --test-name-pattern=mul", {"package.json": BASE}, {"package.json": NARROWED})
    assert resolved is not None and not resolved.files
    assert resolved.command.endswith("( eslint . ) && ( node --test --test-name-pattern=mul )")
    assert 'export PATH="$PWD/node_modules/.bin:$PATH"' in resolved.command
    assert resolved.why == "package.json's `test` script as on the base"


def test_yarn_and_pnpm_scripts_and_variables_before_them() -> None:
    resolved = resolve("CI='a b' yarn unit --reporter dot", {"package.json": BASE}, {"package.json": NARROWED})
    assert resolved is not None
    assert resolved.command.splitlines()[0] == "export CI='a b'"
    assert resolved.command.endswith("( vitest run --reporter dot )")
    assert resolve("pnpm run unit", {"package.json": BASE}, {"package.json": NARROWED}) is not None


def test_an_unchanged_script_or_an_edit_outside_scripts_runs_as_written() -> None:
    with_dependency = json.dumps({**json.loads(BASE), "dependencies": {"left-pad": "1"}})
    assert resolve("npm test", {"package.json": BASE}, {"package.json": with_dependency}) is None
    assert resolve("npm run unit", {"package.json": BASE}, {"package.json": BASE}) is None


def test_make_tox_and_nox_run_the_bases_file_written_beside_the_trees() -> None:
    make = resolve("make -j2 test", {"Makefile": "test:\n\tpytest\n"}, {"Makefile": "test:\n\ttrue\n"})
    assert make is not None and make.command == "make -f .autobuild-base.Makefile -j2 test"
    assert make.files == {".autobuild-base.Makefile": "test:\n\tpytest\n"}
    tox = resolve("python -m tox -e py", {"tox.ini": "[tox]\n"}, {"tox.ini": "[tox]\nx\n"})
    assert tox is not None and tox.command == "python -m tox -c .autobuild-base.tox.ini -e py"
    nox = resolve("nox -s tests", {"noxfile.py": "a"}, {"noxfile.py": None})
    assert nox is not None and nox.command == "nox -f .autobuild-base.noxfile.py -s tests"


def test_commands_it_cant_say_run_as_written() -> None:
    assert resolve("make -C sub test", {"Makefile": "a"}, {"Makefile": "b"}) is None
    assert resolve("tox -c other.ini", {"tox.ini": "a"}, {"tox.ini": "b"}) is None
    assert resolve("npm --prefix web test", {"package.json": BASE}, {"package.json": NARROWED}) is None
    assert resolve("npm test && npm run lint", {"package.json": BASE}, {"package.json": NARROWED}) is None
    assert resolve("make test", {"Makefile": None}, {"Makefile": "test:\n"}) is None


TOX_INI = "[tox]\nenvlist = py\n\n[testenv]\ndeps = pytest\ncommands =\n    pytest -q {posargs}\n"


def test_tox_runs_the_bases_commands_with_the_tasks_dependencies() -> None:
    tree = TOX_INI.replace("deps = pytest", "deps = pytest\n    hypothesis").replace("-q {posargs}", "-q tests/a.py")
    resolved = resolve("tox -e py", {"tox.ini": TOX_INI}, {"tox.ini": tree})
    assert resolved is not None and resolved.why == "tox.ini's commands as on the base"
    text = resolved.files[".autobuild-base.tox.ini"]
    assert "hypothesis" in text and "pytest -q {posargs}" in text and "tests/a.py" not in text


def test_a_tox_ini_whose_envs_only_install_more_runs_as_the_task_left_it() -> None:
    tree = TOX_INI.replace("deps = pytest", "deps = pytest\n    hypothesis")
    assert resolve("tox -e py", {"tox.ini": TOX_INI}, {"tox.ini": tree}) is None
    added = TOX_INI + "\n[testenv:py]\ncommands_pre = rm tests/test_mul.py\n"
    resolved = resolve("tox -e py", {"tox.ini": TOX_INI}, {"tox.ini": added})
    assert resolved is not None and "rm tests" not in resolved.files[".autobuild-base.tox.ini"]
