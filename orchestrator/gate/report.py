"""What `validate` and `run --dry-run` say about the gate before anything runs: the command (per package in a
monorepo) and where it came from, what else was found, how its runs are judged, the worktree setup, and every
tool it needs that isn't on the repo environment's PATH. One document for `--json`, the same as text lines."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from orchestrator.gate.baseline import choose_setup
from orchestrator.gate.choose.candidates import GateChoice, read
from orchestrator.gate.prepare.environment import gate_env, package_json
from orchestrator.gate.prepare.node_bins import MAIN_CHECKOUT_BINS, reuses_node_modules
from orchestrator.gate.prepare.submodules import submodules, uninitialised

_BY_WRAPPED = ("by test id where the runner it starts reports them (pytest, unittest, node --test, jest, vitest,"
               " mocha, go test, cargo test, ctest), else by exit status and failure counts (then its approvals are"
               " approved-unverified)")
_BY_EXIT = ("by exit status, and failure counts where the output has them: no runner reports on the gate's"
            " per-test channel, so it cannot verify a test by its result (its approvals are approved-unverified)")
_SHELL_WORDS = {"cd", "exit", "rc=0", "set", "export", "(cd", "true", "false", "test", "["}


_BY_COUNT = ("; passing tests accounted by count ({0} starts its runner through an API the gate adds no reporter to:"
             " fewer passes than the base fails the gate)")
_COUNTED = re.compile(r"\b(craco)\b")
_RUNNERS_BY_ID = (
    (re.compile(r"\bpytest\b"), "pytest (its JUnit report through PYTEST_ADDOPTS)"),
    (re.compile(r"\bunittest\b"), "unittest, subTests included (a result-recording shim on PYTHONPATH)"),
    (re.compile(r"\bnode\b[^;&|]*\s--test\b"), "node --test (its TAP and JUnit through NODE_OPTIONS)"),
    (re.compile(r"\b(?P<name>jest|vitest|mocha|react-scripts test)\b"),
     "{0}, passes included (its own reporter option, added by the gate's NODE_OPTIONS preload when its"
     " program starts)"),
    (re.compile(r"\bgo test\b"), "go test, subtests included (verbose through GOFLAGS)"),
    (re.compile(r"\bcargo (\+\S+ )?test\b"), "cargo test, doctests included (every test binary run)"),
    (re.compile(r"\bctest\b"), "ctest (its JUnit report)"),
    (re.compile(r"(^|[;&|(]\s*)node\s(?![^;&|]*--test\b)"),
     "node where it runs node:test (its TAP and JUnit through NODE_OPTIONS), else by exit status"),
)
"""The runners whose passing tests the gate names, as a command (or the npm script it runs) shows them."""
_BY_API = ("; passing tests accounted by count ({0} starts {1} through its API, where the gate adds no reporter:"
           " fewer passes than the base fails the gate, naming {1})")
_NODE_FILE = re.compile(r"\bnode\s+(?:-\S+\s+)*([\w./-]+\.[cm]?[jt]s)\b")
_API_USE = re.compile(r"""(?:require\(\s*|from\s+|import\(\s*)['"](mocha|jest|jest-cli|@jest/core|vitest/node)['"]""")
_MAX_SCRIPT = 200_000


def judged_by(command: str | None, root: Path | None = None) -> str:
    """How runs of `command` are told apart from the base's: by test id where the runner reports them (each
    runner the command shows, and how its ids reach the gate); a runner that names no passing test (jest started
    through craco's API) accounts passes by count."""
    if command is None:
        return "not judged: no gate"
    texts = [command, *(scripts_run(command, root) if root is not None else [])]
    script = " ".join(texts)
    counted = _BY_COUNT.format(found.group(1)) if (found := _COUNTED.search(script)) else ""
    if not counted and root is not None and (started := _api_runner(script, root)) is not None:
        counted = _BY_API.format(*started)
    named = [how.format(match.group("name").split()[0] if "name" in pattern.groupindex else "")
             for pattern, how in _RUNNERS_BY_ID if not (counted and how.startswith("node where"))
             and (match := next(filter(None, (pattern.search(text) for text in texts)), None))]
    wrapper = tools(command)[:1] in (["make"], ["npm"], ["pnpm"], ["yarn"], ["bun"], ["tox"], ["nox"])
    how = "by test id: " + "; ".join(named) if named else _BY_WRAPPED if wrapper else _BY_EXIT
    return how + counted


_NODE_TOOLS = {"npm", "pnpm", "yarn", "bun"}
_FOLDER_FLAGS = ("--prefix", "-C", "--dir", "--cwd")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def scripts_run(command: str, root: Path, depth: int = 3) -> list[str]:
    """The package.json scripts `command` runs (`npm test`, `npm run X`, `yarn X`, `pnpm --dir web test`), each
    read where it runs: after a `cd` (to the end of its subshell) or under a folder flag; a script that runs
    scripts is read in turn, `depth` levels down."""
    found: list[str] = []
    folder, stack = root, []
    for piece in re.split(r"(&&|\|\||;|\||\(|\))", command):
        if piece == "(":
            stack.append(folder)
            continue
        if piece == ")":
            folder = stack.pop() if stack else root
            continue
        try:
            words = [word for word in shlex.split(piece) if not _ASSIGNMENT.match(word)]
        except ValueError:
            continue
        if words[:1] == ["cd"] and len(words) > 1:
            folder = folder / words[1]
        elif words and words[0].rsplit("/", 1)[-1] in _NODE_TOOLS:
            where, rest = folder, words[1:]
            while rest and rest[0].startswith("-"):
                flag = rest.pop(0)
                if flag in _FOLDER_FLAGS and rest:
                    where = where / rest.pop(0)
                elif flag.startswith(tuple(f"{name}=" for name in _FOLDER_FLAGS)):
                    where = where / flag.split("=", 1)[1]
            scripts = package_json(where).get("scripts")
            name = _script_name(words[0].rsplit("/", 1)[-1], rest, scripts if isinstance(scripts, dict) else {})
            if name is not None and isinstance(scripts, dict):
                text = str(scripts[name])
                found += [text, *(scripts_run(text, where, depth - 1) if depth > 1 else [])]
    return found


def _script_name(tool: str, rest: list[str], scripts: dict[str, object]) -> str | None:
    """The script `tool rest...` runs, when `scripts` has it."""
    if not rest:
        return None
    name = ("test" if rest[0] in ("test", "t", "tst") else rest[1] if rest[0] in ("run", "run-script") and
            len(rest) > 1 else rest[0] if tool != "npm" else None)
    return name if name in scripts else None


def _api_runner(script: str, root: Path) -> tuple[str, str] | None:
    """(file, runner) when a node program the commands start (`node scripts/test.js`, a file of the repo's) starts
    jest, vitest or mocha through its API: the gate's preload only sees a runner's own program start."""
    for name in _NODE_FILE.findall(script):
        path = (root / name).resolve()
        if not path.is_relative_to(root.resolve()) or not path.is_file() or path.stat().st_size > _MAX_SCRIPT:
            continue
        if (found := _API_USE.search(read(path))) is not None:
            runner = found.group(1)
            return name, "vitest" if runner.startswith("vitest") else "mocha" if runner == "mocha" else "jest"
    return None


def tools(command: str | None) -> list[str]:
    """The programs a shell command starts (first word of each simple command; not shell builtins)."""
    found: list[str] = []
    for piece in re.split(r"&&|\|\||;|\||\(|\)", command or ""):
        try:
            words = [w for w in shlex.split(piece) if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w)]
        except ValueError:
            continue
        if words and words[0] not in _SHELL_WORDS and words[0] not in found and not words[0].startswith("$"):
            found.append(words[0])
    return found


def missing_tools(root: Path, *commands: str | None) -> list[str]:
    """Tools the commands need that the repo's environment doesn't have on PATH (`pnpm`, `go`, `cargo`…)."""
    path = gate_env(root, root).get("PATH")
    needed = [tool for command in commands for tool in tools(command)]
    return sorted({tool for tool in needed if "/" not in tool and shutil.which(tool, path=path) is None})


def gate_document(root: Path, choice: GateChoice, plan_setup: str | None, setup_override: str | None
                  ) -> dict[str, Any]:
    """The gate as `validate`/`--dry-run` show it: `command` and `source` (as always) plus the rest."""
    packages = [p["path"] for p in choice.packages]
    setup = choose_setup(root, plan_setup, setup_override, packages) if choice.command else None
    rows = [{"path": p["path"], "command": p["command"], "source": p["source"], "depends_on": p["depends_on"],
             "judged_by": judged_by(p["command"], root / p["path"]), "missing_tools": missing_tools(root, p["command"])}
            for p in choice.packages]
    commands: list[str | None] = [p["command"] for p in choice.packages] or [choice.command]
    return {"command": choice.command, "source": choice.source, "detected": choice.detected,
            "judged_by": judged_by(choice.command, root) if not rows else "per package", "packages": rows,
            "also_found": list(choice.also), "setup": setup,
            "reuses": MAIN_CHECKOUT_BINS if setup is None and reuses_node_modules(root) else None,
            "missing_tools": missing_tools(root, *commands, setup),
            "submodules": sorted(submodules(root)), "submodules_missing": uninitialised(root)}


def gate_lines(document: dict[str, Any], describe: str) -> list[str]:
    """The same as text lines under a command's output."""
    lines = [f"  gate: {describe}"]
    for row in document["packages"]:
        deps = f", depends on {', '.join(row['depends_on'])}" if row["depends_on"] else ""
        lines.append(f"    {row['path']}: `{row['command']}` ({row['source']}{deps}); judged {row['judged_by']}")
    if document["command"] and not document["packages"]:
        lines.append(f"    judged {document['judged_by']}")
    for other in document["also_found"]:
        lines.append(f"    also found: {other}")
    if document["command"]:
        reuses = f"none: {document['reuses']}" if document.get("reuses") else "none needed"
        lines.append(f"  worktree setup: {document['setup'] or reuses}")
    if document["submodules"]:
        lines.append(f"  submodules: {', '.join(document['submodules'])} (from the main checkout's copies)")
    if document["submodules_missing"]:
        lines.append(f"  not checked out in the main checkout (worktrees get them empty):"
                     f" {', '.join(document['submodules_missing'])}; run `git submodule update --init` there")
    if document["missing_tools"]:
        lines.append(f"  missing on PATH: {', '.join(document['missing_tools'])} (the gate or setup can't run"
                     " without it: install it, or pass --verify/--setup)")
    return lines
