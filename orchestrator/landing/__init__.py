"""After a run: `review` what it produced, `land` the approved work on the base branch, `discard` it.

record.py: what a run recorded and how its branch stands against the base (read-only).
review.py: `review`: each task's outcome and the diff, before you land it.
land.py: `land`: the one command that moves a user's branch, only when asked.
journal.py: `land`'s journal, written before each step, so the next command can finish or undo it.
hooks.py: the user's hooks, run in `land`'s throwaway worktree as for the user's own commit.
leash.py: `python -m orchestrator.landing.leash CMD`: a command that dies with its starter.
holders.py: what a dead `land` left running ended and waited for; an `index.lock` a live git holds, found.
discard.py: `discard`: a feature's worktrees and branches removed, a backup kept.
pick.py: `pick`: a person replaces the pick among a task's attempts, re-merged and gated before landing.
pull_request.py: `pr`: the feature branch pushed and proposed for review.
unverified.py: approved-unverified tasks held back from the user's branch without the person's word.
"""
