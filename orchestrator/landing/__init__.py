"""After a run: `review` what it produced, `land` the approved work on the base branch, `discard` it."""
