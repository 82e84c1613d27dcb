"""The target repository: git behind one guarded write path (git.py, its read-only queries in queries.py; every
git command started as commands.py says), paths from outside kept under their root (confined.py), the user-state
guard around agent sessions (guard.py), and the per-repository lock every writing command holds (lock.py)."""
