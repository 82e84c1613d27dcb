"""A task's attempts and their selection as `show`, `review` and the HTML report say them (issue 40): the pick and
why, each attempt's verdict, turns and cost, the cross-test matrix, the selector's pick and cost.

One reader: the fields come from store/inspection.py's `attempt_fields` (a task's `status --json` row holds them, a
person's `pick` laid over them by the command that reads them); this module only says them, as text or as HTML.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from orchestrator.store.inspection import attempt_fields
from orchestrator.text import plain_line
from orchestrator.views.reports import selection_lines

KEYS = ("attempt_verdicts", "picked", "pick", "attempts_policy", "selection")
"""A task's fields that say its attempts (in `status --json`'s rows, `show` and `review`)."""


def of_row(row: Mapping[str, Any] | None) -> dict[str, Any]:
    """The attempts' fields of a task's row (nothing for a task run as one loop)."""
    return {key: row[key] for key in KEYS if row and key in row}


def of_results(results: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The attempts' fields of each task run as several, from the tasks' results."""
    return {task: fields for task, result in results.items() if (fields := attempt_fields(result))}


def text_lines(data: Mapping[str, Any]) -> list[str]:
    """Each attempt's verdict, and the pick with its reason and how it was decided (a task run as several)."""
    if not data.get("attempt_verdicts"):
        return []
    lines = [f"attempts ({data.get('attempts_policy')}): picked attempt {data.get('picked')}: {data.get('pick')}"]
    for record in data["attempt_verdicts"]:
        mark = "landed" if record.get("landed") else "picked" if record.get("picked") else ""
        refused = f"; refused at the merge: {record['refused']}" if record.get("refused") else ""
        lines.append(f"  attempt {record.get('attempt')} [{record.get('approach') or '-'}]: {record.get('status')}"
                     f"{' (' + mark + ')' if mark else ''}, {record.get('turns', 0)} turn(s),"
                     f" ${float(record.get('cost_usd') or 0):.4f}, {record.get('branch') or '-'}{refused}")
        if record.get("why_not"):
            lines.append(f"    not picked: {record['why_not']}")
    return lines + selection_lines(dict(data.get("selection") or {}))


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _verdict_rows(verdicts: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for record in verdicts:
        mark = " (landed)" if record.get("landed") else " (picked)" if record.get("picked") else ""
        confirmed = record.get("confirmed_by")
        rows.append(f"<tr><td class=num>{_e(record.get('attempt'))}</td><td>{_e(record.get('approach') or '-')}</td>"
                    f"<td class=status>{_e(record.get('status'))}{_e(mark)}</td>"
                    f"<td class=num>{_e(record.get('turns', 0))}</td>"
                    f"<td class=num>${float(record.get('cost_usd') or 0.0):.4f}</td>"
                    f"<td class=num>{'-' if confirmed is None else _e(confirmed)}</td>"
                    f"<td>{_e(record.get('branch') or '-')}</td>"
                    f"<td>{_e(plain_line(str(record.get('why_not') or record.get('refused') or ''), 300))}</td></tr>")
    return ("<table><tr><th>Attempt</th><th>Approach</th><th>Verdict</th><th>Turns</th><th>Cost</th>"
            "<th>Siblings' tests passed</th><th>Branch</th><th>Not picked because</th></tr>" + "".join(rows)
            + "</table>")


def _matrix(cells: Sequence[Mapping[str, Any]]) -> str:
    """The cross-test matrix: a row per candidate's tests, a column per candidate's code."""
    if not cells:
        return ""
    tests = sorted({int(c["tests_of"]) for c in cells})
    codes = sorted({int(c["code_of"]) for c in cells})
    at = {(int(c["tests_of"]), int(c["code_of"])): c for c in cells}
    head = "".join(f"<th>on attempt {code}'s code</th>" for code in codes)
    body = "".join(f"<tr><th>attempt {of}'s tests</th>" + "".join(_cell(at.get((of, code))) for code in codes)
                   + "</tr>" for of in tests)
    return f"<p>Cross-tests (each candidate's new tests on the others' code):</p><table><tr><th></th>{head}</tr>" \
           f"{body}</table>"


def _cell(cell: Mapping[str, Any] | None) -> str:
    if cell is None:
        return '<td class="muted">-</td>'
    failing = f" ({', '.join(str(name) for name in cell.get('failing', [])[:3])})" if cell.get("failing") else ""
    return f"<td>{_e(cell.get('outcome'))}{_e(failing)}</td>"


def html_section(order: Sequence[str], by_task: Mapping[str, Mapping[str, Any]]) -> str:
    """The HTML report's section on tasks run as several attempts (empty when none was)."""
    parts = []
    for task_id in order:
        data = by_task.get(task_id) or {}
        if not data.get("attempt_verdicts"):
            continue
        selection = dict(data.get("selection") or {})
        selector = selection.get("selector") or {}
        decided = (f"<p>Decided by: {_e(selection.get('by'))}"
                   + (f" (tied: {_e(', '.join(str(a) for a in selection['tied']))})" if selection.get("tied") else "")
                   + "</p>") if selection else ""
        chose = (f"<p>Selector: {_e(selector.get('status', '-'))}, chose {_e(selector.get('chosen') or 'none')}"
                 f"{_e('; ' + selector['note']) if selector.get('note') else ''},"
                 f" ${float(selection.get('cost_usd') or 0.0):.4f}</p>") if selector else ""
        parts.append(f"<h3>{_e(task_id)}: {len(data['attempt_verdicts'])} attempts"
                     f" ({_e(data.get('attempts_policy'))})</h3>"
                     f"<p>Picked: attempt {_e(data.get('picked') or 'none')}: {_e(data.get('pick') or '')}</p>"
                     + _verdict_rows(data["attempt_verdicts"]) + decided
                     + _matrix(selection.get("cross_tests") or []) + chose)
    return "<h2>Attempts</h2>" + "".join(parts) if parts else ""
