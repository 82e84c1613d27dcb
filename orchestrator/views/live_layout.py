"""How the tables fit the terminal: widths from its width, cells cut with intent, colour by state, a spinner on
running work, and what a tool call means in words."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from orchestrator.text import one_line

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
LABELS = {"approved": "✔ approved", "approved-unverified": "✔ unverified", "failed": "✘ failed",
          "aborted": "✘ aborted", "error": "! error", "blocked": "⛔ blocked", "skipped": "↷ skipped",
          "conflict": "⚠ conflict", "replaced": "⇉ replaced", "waiting for an answer": "? question",
          "queued": "· queued", "ready": "· ready", "not run": "· not run", "paused": "‖ paused"}
"""Each state in at most STATE_WIDTH cells, so the column never cuts one."""
STYLES = {"approved": "green", "approved-unverified": "green", "failed": "red", "aborted": "red", "error": "red",
          "conflict": "red", "blocked": "yellow", "waiting for an answer": "bold magenta", "running": "cyan",
          "paused": "yellow", "replaced": "blue", "skipped": "dim", "queued": "dim", "not run": "dim"}
"""Colour by state (Rich leaves the colours out under NO_COLOR)."""
STATE_WIDTH = 12
TURN_WIDTH, COST_WIDTH, ELAPSED_WIDTH = 4, 8, 7
TASK_WIDTHS = (4, 16)
"""The task column fits the longest id within these bounds; a longer id is cut in its middle."""
MIN_ACTIVITY, MAX_ACTIVITY = 16, 72
GAP = 3
"""Between two columns: a padding cell each side of the (blank) divider."""


@dataclass(frozen=True)
class Layout:
    """Column widths for one terminal width (0: the column is left out)."""

    task: int
    state: int
    turn: int
    cost: int
    elapsed: int
    activity: int

    @property
    def width(self) -> int:
        widths = [w for w in (self.task, self.state, self.turn, self.cost, self.elapsed, self.activity) if w]
        return sum(widths) + GAP * (len(widths) - 1)


def layout(width: int, task_ids: list[str]) -> Layout:
    """The widest layout that fits: every column, then without Elapsed, then without Cost (the footer has the
    total), then a narrower Task column. Fixed by the width and the ids alone, so a redraw never shifts it."""
    longest = max((len(task_id) for task_id in task_ids), default=4)
    task = max(TASK_WIDTHS[0], min(TASK_WIDTHS[1], longest))
    for cost, elapsed, task_width in ((COST_WIDTH, ELAPSED_WIDTH, task), (COST_WIDTH, 0, task), (0, 0, task),
                                      (0, 0, min(task, 8))):
        candidate = Layout(task_width, STATE_WIDTH, TURN_WIDTH, cost, elapsed, 0)
        rest = width - candidate.width - GAP
        if rest >= MIN_ACTIVITY:
            return Layout(task_width, STATE_WIDTH, TURN_WIDTH, cost, elapsed, min(rest, MAX_ACTIVITY))
    return Layout(min(task, 8), STATE_WIDTH, TURN_WIDTH, 0, 0, MIN_ACTIVITY)


def cut_middle(text: str, width: int) -> str:
    """An id cut in its middle: ids share prefixes (TASK-0…) and differ at the end."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return f"{text[:head]}…{text[len(text) - (width - 1 - head):]}"


def cut_end(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def state_cell(state: str, role: str, now: float, paused: bool = False) -> Text:
    """The state in words and colour; running work shows a spinner and who is at work (player or coach)."""
    if state == "running":
        if paused:
            return Text(LABELS["paused"], style=STYLES["paused"])
        frame = SPINNER[int(now * 10) % len(SPINNER)]
        return Text(f"{frame} {role or 'running'}", style=STYLES["running"])
    return Text(LABELS.get(state, state), style=STYLES.get(state, ""))


def elapsed_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


_OUR_TOOLS = {"report_progress": "reporting progress", "start_implementation": "starting the implementation",
              "record_decision": "recording its decision", "submit_plan": "submitting the plan"}
_WITH_DETAIL = {"Bash": "running `{}`", "Read": "reading {}", "Write": "writing {}", "Edit": "editing {}",
                "MultiEdit": "editing {}", "NotebookEdit": "editing {}", "Grep": "searching for `{}`",
                "Glob": "listing {}", "WebFetch": "fetching {}", "WebSearch": "searching the web for {}"}
_WITHOUT_DETAIL = {"Bash": "running a command", "Read": "reading a file", "Write": "writing a file",
                   "Edit": "editing a file", "MultiEdit": "editing a file", "Grep": "searching the code",
                   "Glob": "listing files", "TodoWrite": "planning its steps", "Task": "handing work to a subagent",
                   "Agent": "handing work to a subagent", "AskUserQuestion": "asking you a question",
                   "ToolSearch": "looking for a tool", "WebFetch": "fetching a page", "WebSearch": "searching the web"}


def tool_words(tool: str, detail: str = "") -> str:
    """A tool call as a person would say it: `reporting progress`, "running `pytest -q`"."""
    name = tool.rsplit("__", 1)[-1] if tool.startswith("mcp__") else tool
    if name in _OUR_TOOLS and tool.startswith("mcp__autobuild__"):
        return _OUR_TOOLS[name]
    detail = one_line(detail, 100) if detail else ""
    if detail and tool in _WITH_DETAIL:
        return _WITH_DETAIL[tool].format(detail)
    if tool in _WITHOUT_DETAIL:
        return _WITHOUT_DETAIL[tool]
    return f"using {name.replace('_', ' ')}" + (f": {detail}" if detail else "")
