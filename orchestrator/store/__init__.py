"""Where a run's facts are kept: checkpoint stores and their read-only readers, traces, pauses.

checkpoints.py: checkpoint storage: SQLite (default) or Postgres, a writer per run.
sqlite_said.py: SQLite's errors as one line each: a lock, a damaged file, a full disk said as what they are.
inspection.py: read-only views of the checkpoints and traces for `status`, `history`, `show`.
outcomes.py: the one truth about a feature's tasks: each task's latest finished attempt.
locations.py: where things are: the target repo from any folder in it, its checkpoint DB.
traces.py: every event as a JSON line, per task and per feature, each with an increasing id.
event_log.py: a task's event log read from any id on (`autobuild logs`), and whether its attempt ended.
steering.py: notes to a running task's player, per attempt, in tables beside the SQLite checkpoints.
task_control.py: pause, unpause and cancel records of a task, in a table beside the notes.
supervise.py: a person's note, pause, unpause or cancel checked and recorded once, for the CLI and the page.
steering_pg.py: the same notes and records beside Postgres checkpoints, per repository, exactly once.
steering_stores.py: which notes and control records a command or a running graph uses (SQLite or Postgres).
served.py: which workers' thread holds a served feature run, and the folder it works in on a worker.
receipts.py: what a task's approved attempt cost against everything else it spent.
stats.py: the loop's scorecard (`autobuild stats`), read-only.
run_options.py: the options a run was started with, so `resume` keeps them.
pause.py: the run's usage-limit pause on disk, so a kill during it resumes the same wait.
paused_threads.py: served runs that gave their worker slot back during a long pause.
quota_store.py: a credential's quota pause in the workers' shared Postgres.
run_liveness.py: whether an unfinished run still goes on, or its process is gone (`status`, the page).
feature_lock.py: a Postgres advisory lock per repository and feature: one worker per feature.
"""
