"""The orchestrator's error tree; the CLI maps each branch to an exit code.

    AutobuildError                 base: anything we raise on purpose
    ├── InputError                 bad plan, bad arguments, missing files -> exit 2, nothing written
    │   ├── PlanError              the feature plan fails validation
    │   ├── RunLockedError         another orchestrator holds this repository -> exit 2
    │   ├── GateUnusableError      the gate or worktree setup can't run on the base (before any agent)
    │   └── Refusal                web/actions.py: a change the page can't make -> its HTTP status (400, 404, 409)
    ├── GitError                   a git command failed (message carries its stderr)
    ├── InfrastructureError        an agent session ended by the infrastructure (API, CLI crash, silence):
    │                              the task stops as `error` and `resume` runs the failed turn again
    ├── StoreError                 the checkpoint DB failed mid-run (locked, deleted, replaced) -> exit 1
    │   └── StoreUnavailableError  the checkpoint DB can't be opened or read (locked, not a database) -> exit 2
    └── RenderError                views/browser.py: the browser gave no picture -> exit 1

Branch on InputError for "the user must fix something"; everything else is a run failure.

Signals (not errors): raised to stop a flow where it stands, caught by the code that started it; never an
outcome of their own, never shown as a failure (the classes live where they are raised):

    agents.limits.UsageLimitExceeded    a usage-limit pause would outlast --max-wait: the run stops (exit 75)
    agents.limits.UsageLimitYield       a served run gives its worker slot back for a long pause: the task is held
    orchestrator.graph.scheduler.Held   a task can't start in this run: it starts on resume
"""


# Exit codes (DESIGN.md §5): InputError and its branches are EXIT_USAGE, other AutobuildErrors EXIT_FAILED.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_QUESTION, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_USAGE_LIMIT = 75  # EX_TEMPFAIL: a usage-limit pause outlasted --max-wait; `resume` later
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader closed the pipe


class AutobuildError(Exception):
    """Base of every error the orchestrator raises deliberately."""


class InputError(AutobuildError):
    """The user's input is wrong; the message says what and how to fix it."""


class PlanError(InputError):
    """The feature plan is invalid."""


class GitError(AutobuildError):
    """A git command failed."""


class InfrastructureError(AutobuildError):
    """Not the loop's verdict: the API, the CLI or the machine failed. Resumable."""


class StoreError(AutobuildError):
    """The checkpoint store failed during a run (locked too long, deleted or replaced): the run stops."""


class StoreUnavailableError(StoreError):
    """The store's driver failed outside a run's steps (another process holds the DB locked, or the file is not a
    database): nothing was done; try again when it is free."""


class RunLockedError(InputError):
    """Another orchestrator process is running this feature."""


class GateUnusableError(InputError):
    """The gate command (or the worktree setup) can't run on the base: nothing would check the work."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
