"""What issue 38's extra runs cost: gate runs per task on a chain of dependent tasks (in-process, scripted agents, the
sample's real pytest), by kind — the task's tree, the clean room (gate/prepare/clean_room.py) and its new tests on the
base's code (gate/spec/new_tests.py) — for tasks that touch no test-side file and add no test (goal: +0) and for tasks
that add a test (the new-tests run runs only those tests). Each pytest session reports where it ran and what it
was asked to run through a conftest.py of the base (a datagram to 127.0.0.1: the gate's sandbox shares the network).

`python -m benchmarks.gate_runs_bench` prints the section `make bench` writes into docs/benchmarks.md."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.cheat_corpus import PY_FILES
from benchmarks.merge_bench import _run as run_plan
from benchmarks.merge_bench import _task

TASKS = 4
REPORTER = ("import json\nimport os\nimport socket\n\n\ndef pytest_sessionstart(session):\n"
            "    said = {'where': os.path.basename(os.getcwd()), 'args': [str(a) for a in session.config.args]}\n"
            "    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(json.dumps(said).encode(),"
            " ('127.0.0.1', {port}))\n")


def kind_of(where: str) -> str:
    """What a pytest session was, from the folder it ran in."""
    if where == "_baseline":
        return "base"
    if where.startswith("_overlay-"):
        return "clean room"
    if where.startswith("_newtests-"):
        return "new tests on the base's code"
    return "task's tree"


def _files(index: int, with_test: bool) -> dict[str, str | None]:
    code = {f"calc/f{index}.py": f"def f{index}(x):\n    return x + {index}\n"}
    if not with_test:
        return dict(code)
    return {**code, f"tests/test_f{index}.py": f"from calc.f{index} import f{index}\n\n\ndef test_f{index}():\n"
                                               f"    assert f{index}(1) == {index + 1}\n"}


def chain(folder: Path, with_test: bool) -> dict[str, Any]:
    """A chain of TASKS dependent tasks, each adding a module (and its test): the sessions by kind, per task."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.setblocking(False)
    files = {**PY_FILES, "conftest.py": REPORTER.replace("{port}", str(listener.getsockname()[1]))}
    tasks = [_task("T0"), *[_task(f"T{i}", f"T{i - 1}") for i in range(1, TASKS)]]
    plan: dict[str, object] = {"id": "FEAT-001", "name": "Bench", "verify": "python -m pytest -q", "tasks": tasks}
    repo = make_sample_repo(folder / "repo", files=files, plan=plan)
    script: dict[Any, Any] = {("player", f"T{i}"): writes(_files(i, with_test)) for i in range(TASKS)}
    asyncio.run(run_plan(repo, folder / "db.sqlite", ScriptedAgents(script | {"coach": approve()}), 1))
    sessions = []
    while True:
        try:
            sessions.append(json.loads(listener.recv(65536)))
        except BlockingIOError:
            break
    listener.close()
    kinds: dict[str, int] = {}
    for session in sessions:
        kinds[kind_of(session["where"])] = kinds.get(kind_of(session["where"]), 0) + 1
    new_tests = [session["args"] for session in sessions if kind_of(session["where"]).startswith("new tests")]
    narrowed = sum(bool(args) and all(arg.startswith("tests/test_f") for arg in args) for args in new_tests)
    return {"per_task": {kind: count / TASKS for kind, count in kinds.items() if kind != "base"},
            "new_tests_runs": len(new_tests), "new_tests_narrowed": narrowed,
            "new_tests_args": new_tests[:1]}


def measure() -> dict[str, Any]:
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        return {"code_only": chain(Path(tmp) / "code", False), "with_tests": chain(Path(tmp) / "tests", True)}


def _runs(found: dict[str, Any]) -> str:
    per_task = found["per_task"]
    total = sum(per_task.values())
    parts = ", ".join(f"{kind} {count:.2f}" for kind, count in sorted(per_task.items()))
    return f"{total:.2f} ({parts})"


def report_lines(found: dict[str, Any]) -> list[str]:
    code, tests = found["code_only"], found["with_tests"]
    extra = sum(count for kind, count in code["per_task"].items() if kind != "task's tree")
    return [
        "## What the clean room and the new-tests rule cost: gate runs per task (issue 38; a chain, real pytest)",
        "",
        f"A chain of {TASKS} dependent tasks on the sample's pytest (`benchmarks/gate_runs_bench.py`), every pytest"
        " session counted by where it ran (before issue 38: 1.0 per task on a chain).",
        "",
        f"- Tasks that touch no test-side file and add no test: {_runs(code)} gate runs per task; extra for issue 38:"
        f" **+{extra:.2f}** (goal: +0)",
        f"- Tasks that each add a module and its test: {_runs(tests)} gate runs per task",
        f"- The new-tests runs on the base's code: {tests['new_tests_narrowed']} of {tests['new_tests_runs']} ran only"
        f" the task's new test file (e.g. `{' '.join(tests['new_tests_args'][0]) if tests['new_tests_args'] else ''}`)",
        "",
    ]


if __name__ == "__main__":
    print("\n".join(report_lines(measure())))
