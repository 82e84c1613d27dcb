"""What `plan` and `run` check before they write or spend anything: a key or a login, and an endpoint that answers."""

from __future__ import annotations

from agents.credentials import check_credentials
from agents.errors import AgentSetupError
from orchestrator.errors import InputError


def require_credentials() -> None:
    """Refuse in one line (InputError: exit 2) unless the sessions would authenticate and reach the model."""
    try:
        check_credentials()
    except AgentSetupError as exc:
        raise InputError(str(exc)) from None
