"""The agent layer's error tree.

    AgentError              base
    ├── AgentSetupError     the session cannot start at all (CLI missing, bad options): not retryable
    └── PromptError         a prompt template is missing or a variable was not supplied

Session outcomes (timeouts, API errors, max turns, budget) are not exceptions: they come back as an
AgentResult with a status, so the graph can route on them.
"""


class AgentError(Exception):
    """Base of every error the agent layer raises."""


class AgentSetupError(AgentError):
    """The session could not be started (e.g. the Claude Code CLI is missing)."""


class PromptError(AgentError):
    """A prompt template could not be found or rendered."""
