"""LangGraph layer: state, routers, nodes, the readiness scheduler and the graph factories (`workflow.py`).

workflow.py: the graphs, wired: the task `StateGraph` and the feature workflow (`@entrypoint`).
feature_run.py: the feature's run body: prepare, the base gate, each task's run, the reports.
pause.py: usage-limit pauses in a run: wait, or hand a served run's slot back (yield).
state.py: the task loop's state and the workflow's input and output.
context.py: the run context (`context_schema`): the services every node needs.
budgets.py: the budgets a person raised at their cap, kept for the rest of the run.
steering.py: notes from the person supervising a run, into a player's next turn or its session's next tool call.
given_answer.py: a served question's resume value: the answer, and where a person gave it (cli, page).
control.py: a person's pause and cancel of a task, at its node boundaries.
live_pause.py: a paused task in a live run waits in place, its slot given back, until unpaused or only pauses are left.
pause_now.py: `pause --now`: a running player session cut at once, its work kept for the same turn.
routing.py: pure routers: state facts in, the next node's name out.
nodes/: the task subgraph's nodes: initialize, player, coach, feedback, finalize, merge.
scheduler.py: readiness scheduling: a task starts when its prerequisites merged and a slot is free.
active.py: the workflow invocations running in this process, by key.
attempts.py: a task as N independent attempts (`--attempts`): each its own loop, one verdict, the pick lands.
attempt_records.py: a task's attempts as records: each outcome, its record, the task's result combined from them.
selection.py: which attempt lands: a pure ranking of the candidates by deterministic keys.
attempt_choice.py: the selection beyond the keys: cross-testing the tied candidates, then a selector session.
attempt_consensus.py: what tied attempts agree their change needs: each one's code lines no sibling changed.
attempt_gates.py: a task's attempts' gates under `first`: a sibling behind another's gate yields the CPU.
setup_once.py: a task's attempts set up once: siblings from the same commit take the first's setup products.
replan.py: `--replan`: a task that ran out of turns or stalled, replaced by smaller ones.
rerun.py: which tasks of a finished feature `resume` or `run TASK` runs again.
estimate.py: what a run is expected to take before it starts (the --dry-run estimate).
events.py: where a graph run's events go: the trace file and the stream writer.
by_url.py: runs by URL: the worker's clone as the repo, pushes at every node's end.
task_alone.py: one task run end to end (`langgraph.json`'s `task`).
accepted_answers.py: an answer `answer` accepted whose run was killed before storing it: `resume` takes it.
runner.py: runs a feature (or one task) through the feature graph on a checkpoint store, for the CLI.
"""
