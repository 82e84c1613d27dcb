"""Where a run's facts are kept: checkpoint stores (SQLite, Postgres) and their read-only readers, the per-task
trace files, the usage-limit pause, and where each is found (locations.py)."""
