"""The maintainers' own test command, read from their files: a Makefile `test` target, the command tox's or
nox's test environment runs (run in the repo's environment: tox/nox themselves would build envs from the
network), a CI workflow's test step. Each finder returns [(command, source)], best first, or nothing."""

from __future__ import annotations

import ast
import configparser
import itertools
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import yaml

from orchestrator.gate.choose import ci_build

MAKE_TEST = re.compile(r"^(tests?)\s*:(?!=)(.*)$", re.MULTILINE)
_RUNNER_TOOLS = {"pytest", "py.test", "tox", "nox", "ctest", "jest", "vitest", "mocha", "trial", "nose2",
                 "zope-testrunner"}
_PYTHON_MODULES = {"pytest", "unittest", "nose2", "tox", "nox", "twisted.trial", "zope.testrunner"}
_TEST_SCRIPT = re.compile(r"(^|/)(run_?tests?|tests?|test_\w+|\w+_tests?)\.py$")
"""A Python file run as a script that runs tests: `runtests.py`, `tests.py`, a test module (`test_gnupg.py`, run by
python-gnupg's tox and CI as `python test_gnupg.py`)."""


def is_runner(command: str) -> bool:  # noqa: PLR0911 - one return per family of runners, read top down
    """Whether a command line runs tests (not an install, a lint or a build), judged by what it starts."""
    try:
        words = [w for w in shlex.split(command) if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w)]
    except ValueError:
        return False
    if not words:
        return False
    tool, rest = Path(words[0]).name, words[1:]
    if tool in _RUNNER_TOOLS or _TEST_SCRIPT.search(words[0]):
        return True
    if re.fullmatch(r"python(3(\.\d+)?)?", tool):
        return (rest[:1] == ["-m"] and rest[1:2] and rest[1] in _PYTHON_MODULES) or bool(
            rest and (_TEST_SCRIPT.search(rest[0]) or rest[:2] in (["manage.py", "test"], ["setup.py", "test"])))
    if tool in ("npm", "yarn", "pnpm", "bun"):
        return rest[:1] in (["test"], ["t"]) or rest[:2] == ["run", "test"]
    if tool == "cargo":
        return rest[:1] in (["test"], ["nextest"])
    if tool == "go":
        return rest[:1] == ["test"]
    if tool in ("make", "gmake"):  # `make test`, or make in a tests folder (`make -C tests`, as uthash's CI)
        folders = [rest[i + 1] for i, word in enumerate(rest[:-1]) if word == "-C"]
        folders += [word[2:] for word in rest if word.startswith("-C") and len(word) > 2]
        return "test" in rest or "check" in rest or any(Path(f).name in ("test", "tests") for f in folders)
    return tool == "node" and "--test" in rest
_BUILD_LINE = re.compile(r"^(?:\$\((?:CC|CXX|LD|AR|RANLIB|LINK|STRIP|MKDIR_P|INSTALL|RM|CP)\)|(?:cc|gcc|g\+\+|c\+\+"
                         r"|clang|clang\+\+|ar|ranlib|ld|strip|mkdir|cp|rm|ln|touch|echo|printf|true|:)(?:\s|$))")


def builds_only(folder: Path, target: str) -> bool:
    """Whether a Makefile target only builds: its recipe, and those of the prerequisites it names with rules of
    their own, only compile, link, copy or echo (a prerequisite without a rule is built by make's implicit ones)."""
    text = next((t for name in ("GNUmakefile", "makefile", "Makefile") if (t := _read(folder / name))), "")
    rules: dict[str, tuple[list[str], list[str]]] = {}
    lines = text.replace("\\\n", " ").splitlines()
    for index, line in enumerate(lines):
        if (rule := re.match(r"^([^\s:=#][^:=]*?)\s*:(?![:=])(.*)$", line)) is not None:
            recipe = [r.strip().lstrip("@-+").strip() for r in itertools.takewhile(
                lambda x: x.startswith("\t") or not x.strip(), lines[index + 1:]) if r.strip()]
            for name in rule.group(1).split():
                rules.setdefault(name, (rule.group(2).split(";")[0].split(), recipe))
    seen: set[str] = set()
    pending = [target]
    while pending:
        name = pending.pop()
        if name in seen or name not in rules:
            continue
        seen.add(name)
        prerequisites, recipe = rules[name]
        for line in recipe:
            words = line.split()
            maker = words[:1] in (["$(MAKE)"], ["make"], ["${MAKE}"])
            if not (maker and not {"test", "tests", "check"} & set(words)) and not _BUILD_LINE.match(line):
                return False
        pending += [p for p in prerequisites if p != "|"]
    return True


_WRAPPERS = re.compile(r"^(uv run|poetry run|pdm run|pipenv run|hatch run)\s+(--\S+\s+)*")
_TOX_CALL = re.compile(r"^(python3? -m )?tox\b")
_NOX_CALL = re.compile(r"^(python3? -m )?nox\b")


def normalize(command: str, python: str) -> str | None:
    """The command as it runs in the repo's own environment: `pytest` and `python3 -m` through the repo's
    python, `coverage run -m X` as `python -m X`, `uv run`/`poetry run` dropped; None if it can't be shown
    (CI expressions, unresolved substitutions)."""
    command = _WRAPPERS.sub("", command.strip().lstrip("-@ ").strip())
    if not command or "${{" in command or re.search(r"\{[^}]*\}", command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[:2] == ["coverage", "run"] and "-m" in words:
        words = [python, *words[words.index("-m"):]]
    if words[0] in ("pytest", "py.test"):
        words = [python, "-m", "pytest", *words[1:]]
    elif words[0] in ("python", "python3") or re.fullmatch(r"python3\.\d+", words[0]):
        words[0] = python
    return shlex.join(words)


def makefile(folder: Path, python: str) -> list[tuple[str, str]]:
    """`make test` (or `make tests`); when its recipe hands over to tox or nox, the command their test env runs
    (tox and nox would build their own envs from the network)."""
    for name in ("GNUmakefile", "makefile", "Makefile"):
        text = _read(folder / name)
        target = MAKE_TEST.search(text)
        if target is None:
            continue
        command, source = f"make {target.group(1)}", f"{name} {target.group(1)} target"
        lines = text[target.end():].splitlines()[1:]
        recipe = [line.strip().lstrip("@-") for line in itertools.takewhile(lambda x: x.startswith("\t"), lines)]
        for call, via in ((_TOX_CALL, tox), (_NOX_CALL, nox)):
            if any(call.match(line) for line in recipe):
                handed = via(folder, python)
                return [(handed[0][0], f"{source} runs {via.__name__}: {handed[0][1]}")] if handed else \
                    [(command, source)]
        return [(command, source)]
    return []


def _tox_line(line: str, python: str) -> str | None:
    line = line.strip()
    for token, value in (("{envpython}", python), ("{envbindir}/", ""), ("{toxinidir}/", ""), ("{toxinidir}", "."),
                         ("{posargs}", "")):
        line = line.replace(token, value)
    line = re.sub(r"\{posargs:([^}]*)\}", r"\1", line)
    # An option naming tox's own folders (`--basetemp={env_tmp_dir}`) has no meaning outside tox: dropped.
    line = " ".join(word for word in line.split() if "{" not in word)
    return normalize(line, python) if line else None


def _first_runner(lines: list[str], python: str) -> str | None:
    for line in lines:
        command = _tox_line(line, python)
        if command and is_runner(command) and not _TOX_CALL.match(command):
            return command
    return None


def tox(folder: Path, python: str) -> list[tuple[str, str]]:
    """The test command of tox's base test env (`[testenv] commands`, tox.toml's `env_run_base`)."""
    ini = _read(folder / "tox.ini")
    source = "tox.ini [testenv] commands"
    if not ini:
        pyproject = _toml(folder / "pyproject.toml").get("tool", {}).get("tox", {})
        ini, source = str(pyproject.get("legacy_tox_ini", "")), "pyproject.toml legacy_tox_ini [testenv] commands"
        native = _toml(folder / "tox.toml") or (pyproject if "env_run_base" in pyproject else {})
        if not ini and native:
            lists = (native.get("env_run_base") or {}).get("commands") or []
            lines = [" ".join(_tox_word(w) for w in cmd) for cmd in lists if isinstance(cmd, list)]
            found = _first_runner(lines, python)
            where = "tox.toml" if (folder / "tox.toml").is_file() else "pyproject.toml [tool.tox]"
            return [(found, f"{where} env_run_base commands")] if found else []
    if not ini:
        return []
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(ini)
    except configparser.Error:
        return []
    sections = ["testenv", *(s for s in parser.sections() if re.fullmatch(r"testenv:(py\w*|test\w*)", s))]
    for section in sections:
        if parser.has_option(section, "commands"):
            lines = parser.get(section, "commands").replace("\\\n", " ").splitlines()
            found = _first_runner(lines, python)
            if found:
                return [(found, source if section == "testenv" else source.replace("testenv", section))]
    return []


def _tox_word(word: Any) -> str:
    if isinstance(word, dict):  # {replace = "posargs", default = ["tests"]}
        default = word.get("default") or []
        return " ".join(map(str, default)) if isinstance(default, list) else str(default)
    return "" if "{" in str(word) else shlex.quote(str(word))


def nox(folder: Path, python: str) -> list[tuple[str, str]]:
    """The first `session.run(...)` of a test session of noxfile.py that runs tests."""
    try:
        tree = ast.parse(_read(folder / "noxfile.py"))
    except SyntaxError:
        return []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or "test" not in node.name:
            continue
        for call in ast.walk(node):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "run"
                    and call.args and all(isinstance(a, ast.Constant | ast.Starred) for a in call.args)):
                words = [str(a.value) for a in call.args if isinstance(a, ast.Constant)]
                command = normalize(shlex.join(words), python)
                if command and is_runner(command):
                    return [(command, f"noxfile.py session {node.name}")]
    return []


def ci(folder: Path, python: str) -> list[tuple[str, str]]:
    """The first step of a CI workflow (GitHub Actions, GitLab CI) that runs tests, at the repo's top; a ctest
    step with the job's build steps before it (gate/choose/ci_build.py)."""
    scripts, ctest = _github_steps(folder)  # the steps before a ctest step, and it
    for job in _yaml(folder / ".gitlab-ci.yml").values() if ctest is None else ():
        script = job.get("script") if isinstance(job, dict) else None
        for line in script if isinstance(script, list) else []:
            scripts.append((str(line), ".gitlab-ci.yml"))
    for script, source in scripts:
        moved = False  # after a `cd`, a step tests one part of the repo: not the repo's command
        for line in script.replace("\\\n", " ").splitlines():
            for piece in re.split(r"&&|;|\|\|", line):
                moved = moved or bool(re.match(r"\s*(cd|pushd)\s", piece))
                command = None if moved else normalize(piece, python)
                if not command or not is_runner(command):
                    continue
                if _TOX_CALL.match(command) or _NOX_CALL.match(command):
                    via = tox(folder, python) if _TOX_CALL.match(command) else nox(folder, python)
                    if via:
                        return [(via[0][0], f"{source} runs {command.split()[-1]}: {via[0][1]}")]
                    continue
                return [(command, f"{source} test step")]
    return [ctest] if ctest is not None else []


def _github_steps(folder: Path) -> tuple[list[tuple[str, str]], tuple[str, str] | None]:
    """GitHub Actions' run steps at the repo's top, with their workflow; first, a ctest step made whole with its
    job's build steps (None without one)."""
    scripts: list[tuple[str, str]] = []
    workflows = folder / ".github" / "workflows"
    for path in sorted([*workflows.glob("*.yml"), *workflows.glob("*.yaml")]) if workflows.is_dir() else []:
        workflow = _yaml(path)
        jobs = workflow.get("jobs") or {}
        for job in jobs.values() if isinstance(jobs, dict) else []:
            steps = [s for s in job.get("steps") or [] if isinstance(s, dict)] if isinstance(job, dict) else []
            for index, step in enumerate(steps):
                if not isinstance(step.get("run"), str):
                    continue
                if ci_build.runs_ctest(step["run"]):
                    command = ci_build.ctest_step({**job, "steps": steps}, index, workflow.get("env") or {})
                    if command:
                        return scripts, (command, f".github/workflows/{path.name} test step (its build steps"
                                                  " before it)")
                elif "working-directory" not in step:
                    scripts.append((step["run"], f".github/workflows/{path.name}"))
    return scripts, None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    except OSError:
        return ""


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(_read(path))
    except tomllib.TOMLDecodeError:
        return {}


def _yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(_read(path)) if path.is_file() else None
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}
