"""Which command gates a run: the user's, the plan's or the maintainers' own, a monorepo's per package, and the command
as the base defines it.

detect.py: which command gates a run: `--verify`, the plan's `verify`, else the repo's own tests.
maintainers.py: the maintainers' own test command, read from their Makefile, tox, nox or CI files.
candidates.py: the test commands one folder's files call for, best first.
monorepo.py: every package of a monorepo that has its own tests.
ci_build.py: a CI job's ctest step with the build steps before it, as one command.
base_command.py: the command as the base defines it: a task's edit to its script changes nothing.
"""
