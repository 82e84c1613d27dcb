"""The command line, thin over the typed core: the parser and dispatch, and one module per command family.

main.py: the dispatch only, with the exit codes of DESIGN §5.
parser.py: the command line's grammar; usage errors as one line (exit 2).
ids.py: the ids on a command line checked before anything reads or writes.
run.py: `run`, `resume` and `answer`: the run itself under the repository's lock.
prefetch.py: the Agent SDK loaded on a thread beside a run's start-up.
disk_full.py: a full disk, however a run met it, as the one line it ends with (`resume` named).
dry_run.py: `run --dry-run`: the tasks a command would run, their expected turns and cost, the gate.
ask.py: questions at the terminal, asked as soon as an agent asks them.
as_found.py: exit 2 leaves the repository and the store as they were found.
preflight.py: what `plan` and `run` check before they write or spend anything.
read.py: `status`, `history` and `show`: what a run recorded, as text or JSON.
logs.py: `logs FEAT TASK [--follow] [--since ID]`: a task's event log, one line an event.
steer.py: `steer FEAT TASK "note"`: a note to a running task's player, into the steering queue.
ui.py: `ui [--port N] [--open]`: the page on the runs (orchestrator/web/), on 127.0.0.1 with a token.
stats.py: `stats`: the loop's scorecard over every feature in the store.
clean.py: `clean`: leftover worktrees and task branches.
plan.py: `validate` and `plan`: check a feature plan, or have the planner agent write one.
graph.py: `graph`: the plan as a Mermaid flowchart, or drawn as SVG, PNG or HTML.
landing.py: `review`, `land` and `discard`: their output and exit codes.
pr.py: `pr`: its output and exit codes over landing/pull_request.py.
workers.py: `serve`, `submit` and the `--server` forms of the read commands and `answer`.
doctor.py: `doctor`: is everything a run needs in place?
completion.py: `completion bash|zsh`: the shell's completion script, generated from the parser.
completion_ids.py: the feature and task ids completion offers, read from the repo and the store.
messages.py: one-line notes and plan warnings on stderr (stdout stays for results and JSON).
output.py: a command's document or --json error on stdout.
next_steps.py: the next step, printed after `plan` and at the end of a run.
tracing.py: LangSmith tracing for a command's lifetime, flushed at the end.
demo.py: `make demo`: a sample repo, a four-task plan and the scripted model through the real CLI.
"""
