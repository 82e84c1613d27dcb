"""The generated parts of docs/architecture.md: the layers (from tests/unit/test_layering.py's rules) and the
graphs' pictures (Mermaid drawn by LangGraph from the compiled graphs). `make docs-graphs` rewrites them;
tests/unit/test_architecture_doc.py fails when the page drifts from the code.

Each part sits between `<!-- generated: NAME -->` and `<!-- end: NAME -->`; the text around them is written
by hand.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
from collections.abc import Callable
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _first_line(obj: object) -> str:
    return (inspect.getdoc(obj) or "").split("\n\n")[0].replace("\n", " ")


def layers() -> str:
    """The layers, top first, and what each may import: its own layer and every layer below it."""
    from tests.unit.test_layering import LAYERS  # noqa: PLC0415 - the rules the layering test asserts

    def named(name: str) -> str:
        if not name:
            return "`__init__.py`"
        return f"`{name}/`" if (PAGE.parents[1] / "orchestrator" / name / "__init__.py").is_file() else f"`{name}.py`"

    rows = ["| layer | in `orchestrator/` | may import |", "|---|---|---|"]
    for index in reversed(range(len(LAYERS))):
        below = f"layers 0-{index}" if index else "layer 0"
        rows.append(f"| {index} | {', '.join(named(name) for name in sorted(LAYERS[index]))} | {below} |")
    return "\n".join(rows)


def _tasks() -> str:
    """The functional API's `@task`s in graph/, which LangGraph's picture of an `@entrypoint` does not show."""
    from langgraph.func import _TaskFunction  # noqa: PLC0415 - what `@task` returns (LangGraph 1.x)

    import orchestrator.graph  # noqa: PLC0415 - compiles the graphs

    lines = []
    for info in pkgutil.walk_packages(orchestrator.graph.__path__, "orchestrator.graph."):
        module = importlib.import_module(info.name)
        lines += [f"- `{name}` ({info.name.removeprefix('orchestrator.').replace('.', '/')}.py): "
                  f"{_first_line(obj.func)}" for name, obj in vars(module).items()
                  if isinstance(obj, _TaskFunction) and obj.func.__module__ == info.name]
    return "\n".join(lines)


def _mermaid(text: str) -> str:
    return f"```mermaid\n{text.rstrip()}\n```"


def feature_graph() -> str:
    """The served `autobuild` graph as LangGraph draws it, and the `@task`s its entrypoint calls."""
    from orchestrator.graph import workflow  # noqa: PLC0415 - compiles the graphs

    return (_mermaid(workflow.graph.get_graph().draw_mermaid())
            + "\n\nInside `autobuild`, the `@task`s it calls (checkpointed: replayed, not run again, on resume):\n\n"
            + _tasks())


def task_graph() -> str:
    """The task subgraph in its largest shape (with the pre-check that `--precheck-model` adds)."""
    from orchestrator.graph import workflow  # noqa: PLC0415 - compiles the graphs

    return _mermaid(workflow.task_graph(max_turns=10, precheck=True).get_graph().draw_mermaid())


PARTS: dict[str, Callable[[], str]] = {"layers": layers, "feature-graph": feature_graph, "task-graph": task_graph}


def _part(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- generated: {name} -->\n)(.*?)(<!-- end: {name} -->)", re.S)


def regenerated(page: str) -> str:
    """`page` with every generated part drawn again from the code."""
    for name, draw in PARTS.items():
        if not _part(name).search(page):
            raise ValueError(f"docs/architecture.md has no `<!-- generated: {name} -->` part")
        text = draw()
        page = _part(name).sub(lambda match, text=text: f"{match[1]}{text}\n{match[3]}", page)
    return page


def main() -> int:
    PAGE.write_text(regenerated(PAGE.read_text()))
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
