"""The target repository: git behind one guarded write path, and what else of the user's we watch.

commands.py: how every git command of ours starts: none of the user's hooks, fsmonitor or filters.
config_stamp.py: every config file git reads in a checkout, stamped: when a remembered config answer holds.
git.py: the one guarded write path: feature and task branches, worktrees, commits, merges.
queries.py: read-only questions about refs, commits and trees.
footing.py: what a worktree's proof rests on: the files git resolves it from, stamped; the shared git dir.
guard.py: the user's side of the repository, snapshotted around sessions: compared, never reverted.
watch.py: what the user owns beyond refs (`.git/config`, hooks, `info/`, venv, node_modules), watched.
sandbox_stubs.py: the empty mount points Claude Code's Bash sandbox leaves in the git dir and a worktree.
lock.py: one lock per target repository, held by every command that writes.
lfs.py: Git LFS objects a commit needs that the repository doesn't have.
confined.py: the one resolver for paths from outside: kept under a named root.
run_files.py: the run folder's own files, written through confined.py, no link followed.
remote.py: repos by URL: checks, the worker's clone cache, pushes.
forge.py: the forge side of a pull request: the remote, the page, `gh pr create`.
"""
