"""What a person sees: the live view and progress lines, reports, pictures and notifications.

Views read facts; they never import the graph.

live_view.py: the live view: one row per task and a footer, updated from events.
live_layout.py: how the tables fit the terminal: widths, cut cells, colours, the spinner.
progress.py: one line per event (or JSON lines with `--json`) and the final table.
attempt_lines.py: the progress lines of a task's attempts: the queue note, each attempt's start and end, the pick.
attempt_report.py: a task's attempts and their selection as `show`, `review` and the HTML report say them.
live_prompt.py: a question's answer typed inside the live view, the table refreshing above it.
reports.py: AUTO-RUN.md reports: one per task and one for the feature.
html_report.py: the feature's `report.html`: one self-contained page.
pictures.py: the plan flowchart and the run's timeline in AUTO-RUN.md, and `autobuild graph`.
mermaid.py: Mermaid text: the plan as a flowchart, a run as a timeline, escaped.
timeline.py: what ran when, read back from the traces.
browser.py: pictures drawn by a headless Chromium with the bundled mermaid.js.
pr_body.py: a pull request's body: the feature report and what the request holds.
notify.py: `--notify` and `--on-event`: the events a person waits for.
"""
