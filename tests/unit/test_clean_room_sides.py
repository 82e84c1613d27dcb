"""Which side of the product a file is on (gate/prepare/sides.py), mixed manifests split key by key
(gate/prepare/manifests.py): what the clean room puts back to the base's version; and what a base test failing there
becomes (gate/prepare/clean_room.py)."""

from __future__ import annotations

import json
import tomllib

import pytest

from orchestrator.facts import Acceptance, GateResult
from orchestrator.gate.prepare import clean_room
from orchestrator.gate.prepare.clean_room import Room
from orchestrator.gate.prepare.manifests import clean
from orchestrator.gate.prepare.sides import command_files, python_packages, side_of

CODE = ["calc/mul.py", "src/calc/mul.py", "mul.py", "mul.js", "lib/index.mjs", "src/app.tsx", "mul.go",
        "internal/store/fake.go", "src/lib.rs", "crates/a/src/x.rs", "src/mul.c", "go.sum", "yarn.lock",
        "Cargo.lock", "package-lock.json", "calc/latest.py"]
TEST = ["tests/conftest.py", "conftest.py", "calc/conftest.py", "pytest.ini", "tox.ini", "sitecustomize.py",
        "src/sitecustomize.py", "usercustomize.py", "calc.pth", "tests/helpers.py", "calc/tests/helpers.py",
        "test_utils.py", "calc/testing.py", "mock_db.js", "jest.config.js", "vitest.config.ts", ".mocharc.yml",
        ".npmrc", ".env", ".cargo/config.toml", ".github/workflows/ci.yml", "__mocks__/mul.js", "fix_test.go",
        "testdata/golden.txt", "build.rs", "tests/it.rs", "benches/b.rs", "Makefile", "CMakeLists.txt",
        "setup.py", "noxfile.py", "tsconfig.json", "babel.config.js", "mul", "README.md", "docs/conf.py",
        "requirements-dev.txt", "calc/data/expected.json", "jest.setup.ts", "src/setupTests.ts", "x.test.ts",
        "node_modules/left-pad/index.js", "go.work"]


@pytest.mark.parametrize("path", CODE)
def test_modules_of_the_product_are_code(path: str) -> None:
    assert side_of(path) == "code"


@pytest.mark.parametrize("path", TEST)
def test_everything_else_is_on_the_test_side(path: str) -> None:
    assert side_of(path) == "test"


@pytest.mark.parametrize("path", ["pyproject.toml", "setup.cfg", "package.json", "web/package.json", "Cargo.toml",
                                  "go.mod", "tools/go.mod"])
def test_manifests_are_split_key_by_key(path: str) -> None:
    assert side_of(path) == "mixed"


GO_MOD = ("module example.com/calc\n\ngo 1.21\n\nrequire github.com/stretchr/testify v1.9.0\n\n"
          "replace example.com/fork => ./third_party/fork\n")


def test_a_replace_the_task_added_to_go_mod_is_put_back_and_its_requirements_kept() -> None:
    tree = GO_MOD.replace("v1.9.0", "v1.9.0\nrequire golang.org/x/text v0.14.0") + (
        "\nreplace (\n\tgithub.com/stretchr/testify => ./fake_testify\n)\n")
    text, test_side = clean("go.mod", GO_MOD, tree)
    assert test_side and text is not None
    assert "golang.org/x/text v0.14.0" in text and "fake_testify" not in text
    assert text.count("replace example.com/fork => ./third_party/fork") == 1
    assert clean("go.mod", GO_MOD, GO_MOD.replace("1.21", "1.22")) == (GO_MOD.replace("1.21", "1.22"), False)


def test_a_dependency_redirected_in_cargo_or_package_json_is_put_back() -> None:
    cargo = "[package]\nname = 'calc'\nversion = '0.1.0'\n\n[dependencies]\nserde = '1'\n"
    text, test_side = clean("Cargo.toml", cargo, cargo + "\n[patch.crates-io]\npretty_assertions = { path = 'fake' }\n")
    assert test_side and text is not None and "patch" not in text and "serde" in text
    package = '{"name": "calc", "dependencies": {"a": "1"}}'
    text, test_side = clean("package.json", package, '{"name": "calc", "dependencies": {"a": "1"}, '
                                                     '"overrides": {"chai": "file:./fake-chai"}}')
    assert test_side and text is not None and "overrides" not in text


def test_a_file_the_gate_command_names_judges_and_is_on_the_test_side() -> None:
    named = command_files("python check.py && ./run.sh", frozenset({"check.py", "run.sh", "calc/mul.py"}))
    assert named == {"check.py", "run.sh"}
    assert side_of("check.py", named) == "test"
    assert side_of("check.py") == "code"


PYPROJECT = "[project]\nname = 'calc'\ndependencies = ['a']\n\n[tool.pytest.ini_options]\ntestpaths = ['tests']\n"


def test_a_pytest_option_the_task_added_is_put_back_and_its_new_dependency_kept() -> None:
    tree = ("[project]\nname = 'calc'\ndependencies = ['a', 'b']\n\n[project.optional-dependencies]\ntest = ['x']\n"
            "fast = ['y']\n\n[tool.pytest.ini_options]\ntestpaths = ['tests']\naddopts = '-p calc.fix'\n")
    text, test_side = clean("pyproject.toml", PYPROJECT, tree)
    assert test_side and text is not None
    assert tomllib.loads(text) == {"project": {"name": "calc", "dependencies": ["a", "b"],
                                               "optional-dependencies": {"fast": ["y"]}},
                                   "tool": {"pytest": {"ini_options": {"testpaths": ["tests"]}}}}


def test_a_manifest_changed_only_on_one_side_keeps_that_sides_text() -> None:
    only_code = PYPROJECT.replace("['a']", "['a', 'b']")
    assert clean("pyproject.toml", PYPROJECT, only_code) == (only_code, False)
    only_tests = PYPROJECT + "addopts = '-x'\n"
    assert clean("pyproject.toml", PYPROJECT, only_tests) == (PYPROJECT, True)
    assert clean("pyproject.toml", PYPROJECT, "[broken") == (PYPROJECT, True)
    assert clean("pyproject.toml", None, "[tool.pytest.ini_options]\naddopts = '-p x'\n") == (None, True)


def test_a_pytest_entry_point_is_on_the_test_side() -> None:
    tree = PYPROJECT + "\n[project.entry-points.pytest11]\nfix = 'calc.fix'\n"
    assert clean("pyproject.toml", PYPROJECT, tree) == (PYPROJECT, True)


def test_package_json_keeps_the_tasks_dependencies_and_the_bases_runner_keys() -> None:
    base = {"name": "calc", "main": "mul.js", "scripts": {"test": "jest"}, "jest": {"testEnvironment": "node"}}
    tree = {**base, "dependencies": {"left-pad": "1"}, "devDependencies": {"x": "1"},
            "jest": {"moduleNameMapper": {"^../mul$": "<rootDir>/stub.js"}}}
    text, test_side = clean("package.json", json.dumps(base), json.dumps(tree))
    assert test_side and text is not None
    assert json.loads(text) == {**base, "dependencies": {"left-pad": "1"}}


def test_cargo_dev_dependencies_go_back_and_features_stay() -> None:
    base = '[package]\nname = "calc"\nversion = "0.1.0"\n\n[dependencies]\n'
    tree = (base + 'serde = "1"\n\n[features]\nfast = []\n\n[dev-dependencies]\n'
            'calc = { path = ".", features = ["fake"] }\n')
    text, test_side = clean("Cargo.toml", base, tree)
    assert test_side and text is not None
    assert tomllib.loads(text) == {"package": {"name": "calc", "version": "0.1.0"}, "dependencies": {"serde": "1"},
                                   "features": {"fast": []}}


def test_setup_cfg_puts_back_the_pytest_section() -> None:
    base = "[metadata]\nname = calc\n\n[options]\npackages = find:\n"
    tree = base.replace("find:", "find:\ninstall_requires = a") + "\n[tool:pytest]\naddopts = -p fix\n"
    text, test_side = clean("setup.cfg", base, tree)
    assert test_side and text is not None
    assert "install_requires = a" in text and "tool:pytest" not in text


def _run(passing: list[str]) -> GateResult:
    return GateResult(passed=True, command="pytest", summary="", output="", exit_code=0, tests_passed=len(passing),
                      tests_failed=0, failing=[], new_failures=[], ran_classes=None, passing=passing)


def test_a_base_test_passing_only_with_the_tasks_test_side_is_accepted_only_by_naming_every_file() -> None:
    base, tree = _run(["tests.test_mul::test_mul", "tests.test_mul::test_zero"]), _run(["tests.test_mul::test_mul"])
    room = Room(restore=("tests/conftest.py", "pytest.ini"), named=("pytest.ini", "tests/conftest.py"))
    failing = {"tests.test_mul::test_mul": "assert 7 == 6", "tests.test_mul::test_zero": "fails"}

    def fates(accepted: list[Acceptance]) -> list[tuple[str, str | None]]:
        found = clean_room.changes(base, tree, failing, room, ["tests/test_mul.py"], accepted=accepted)
        return [(change["test"], change["accepted"]) for change in found]

    assert fates([]) == [("tests.test_mul::test_mul", None)], "a test failing in the tree is accounted there"
    assert fates([Acceptance(test="tests/conftest.py", reason="r")]) == [("tests.test_mul::test_mul", None)]
    assert fates([Acceptance(test="tests/conftest.py", reason="r"), Acceptance(test="pytest.ini", reason="r")]) == [
        ("tests.test_mul::test_mul", "r")]
    detail = clean_room.changes(base, tree, failing, room, ["tests/test_mul.py"], accepted=[])[0]["detail"]
    assert detail.endswith("(assert 7 == 6); the task added or changed on the test side: pytest.ini, tests/conftest.py")


def test_a_python_packages_data_is_code_and_a_test_folders_is_not() -> None:
    packages = python_packages(["calc/__init__.py", "calc/sub/__init__.py", "tests/__init__.py", "setup.py"])
    assert packages == frozenset({"calc", "calc/sub"})
    assert side_of("calc/factor.txt", packages=packages) == "code", "the package's own data, read by its code"
    assert side_of("calc/sub/table.json", packages=packages) == "code"
    assert side_of("tests/data/expected.txt", packages=packages) == "test"
    assert side_of("calc/.hidden.cfg", packages=packages) == "test"
    assert side_of("calc/conftest.py", packages=packages) == "test"
    assert side_of("golden/out.txt", packages=packages) == "test"


def test_a_module_whose_name_ends_in_rc_is_code_its_dotfile_config_not() -> None:
    """arc.go at a Go module's top was taken for an `rc` config (`*rc.*`): the clean room put the broken code back
    with the test, and a rewritten test was approved (tests/graph/test_nested_modules.py)."""
    assert side_of("arc.go") == "code" and side_of("src/lib/arc.py") == "code" and side_of("orc.js") == "code"
    assert side_of(".mocharc.yml") == "test" and side_of(".babelrc.js") == "test" and side_of("npmrc") == "test"
