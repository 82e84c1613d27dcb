"""A CI job's ctest step as one command the gate can run: ctest needs the build its job's earlier steps made, so the
job's build steps (cmake, make, ninja, meson, configure: nothing that installs; a step's other lines, such as `ls`
or `sudo apt-get install`, left out) come first, each step in the folder it ran in, with the workflow's `${{ }}`
expressions that have a fixed value resolved (`github.workspace`, `env.X`, a matrix's first value); None when one
can't be shown."""

from __future__ import annotations

import re
import shlex
from typing import Any

_BUILD_TOOLS = {"cmake", "make", "gmake", "ninja", "meson", "mkdir", "cd", "./configure", "autoreconf",
                "./autogen.sh", "./bootstrap"}
_EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def ctest_step(job: dict[str, Any], index: int, workflow_env: dict[str, Any]) -> str | None:
    """The command of the job's step `index` (which runs ctest): the job's earlier build steps, then the step's
    own lines up to its ctest call."""
    steps = [step for step in job.get("steps") or [] if isinstance(step, dict)]
    values = _values(job, workflow_env)
    parts = []
    for step in steps[:index]:
        if isinstance(step.get("run"), str) and (built := _step(step, values, build_only=True)) is not None:
            parts.append(built)
    test = _step(steps[index], values, build_only=False)
    return " && ".join([*parts, test]) if test is not None else None


def runs_ctest(script: str) -> bool:
    return any(_tool(piece) == "ctest" for piece in _pieces(script))


def _values(job: dict[str, Any], workflow_env: dict[str, Any]) -> dict[str, str]:
    values = {"github.workspace": ".", "runner.os": "Linux"}
    for env in (workflow_env, job.get("env") or {}):
        if isinstance(env, dict):
            values |= {f"env.{key}": str(value) for key, value in env.items() if not isinstance(value, dict | list)}
    matrix = (job.get("strategy") or {}).get("matrix") if isinstance(job.get("strategy"), dict) else None
    for key, value in (matrix or {}).items() if isinstance(matrix, dict) else ():
        if isinstance(value, list) and value and not isinstance(value[0], dict | list):
            values[f"matrix.{key}"] = str(value[0])
    return values


def _resolve(text: str, values: dict[str, str]) -> str | None:
    unknown = [found for found in _EXPRESSION.findall(text) if found not in values]
    return None if unknown else _EXPRESSION.sub(lambda found: values[found.group(1)], text)


def _pieces(script: str) -> list[str]:
    return [piece.strip() for line in script.replace("\\\n", " ").splitlines()
            for piece in re.split(r"&&|;", line) if piece.strip()]


def _tool(piece: str) -> str:
    try:
        words = [w for w in shlex.split(piece) if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w)]
    except ValueError:
        return ""
    return words[0] if words else ""


def _step(step: dict[str, Any], values: dict[str, str], *, build_only: bool) -> str | None:
    """A step's lines as one command in its folder: a build step's build lines (None if it has none: another line
    of it, `ls` or an install, is left out, not the step), a test step's up to its ctest call."""
    folder = _resolve(str(step.get("working-directory") or ""), values)
    pieces = _pieces(str(step.get("run") or ""))
    if build_only:
        pieces = [piece for piece in pieces if _tool(piece) in _BUILD_TOOLS and "install" not in piece.split()]
        if all(_tool(piece) == "cd" for piece in pieces):
            return None  # nothing built (a folder made is kept: a later step may build in it)
    else:
        ends = [i for i, piece in enumerate(pieces) if _tool(piece) == "ctest"]
        pieces = pieces[:ends[0] + 1] if ends else []
    resolved = [_resolve(piece, values) for piece in pieces]
    if folder is None or not resolved or None in resolved:
        return None
    lines = [piece for piece in resolved if piece is not None]
    if folder:
        lines.insert(0, f"cd {shlex.quote(folder)}")
    command = " && ".join(lines)
    return f"({command})" if any(_tool(piece) in ("cd", "pushd") for piece in lines) else command
