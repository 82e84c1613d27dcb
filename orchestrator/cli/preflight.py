"""What `plan` and `run` check before they write or spend anything: a key or a login, and an endpoint that answers."""

from __future__ import annotations

import os

from agents.credentials import DEFAULT_ENDPOINT, Credential, check_credentials, check_endpoint, find_credential
from agents.errors import AgentSetupError
from orchestrator.errors import InputError


def require_credentials() -> None:
    """Refuse in one line (InputError: exit 2) unless the sessions would authenticate and reach the model."""
    try:
        check_credentials()
    except AgentSetupError as exc:
        raise InputError(str(exc)) from None


def endpoint_problem() -> tuple[str, str | None]:
    """The endpoint sessions will call, and why its models listing fails (None when it answers): the same free
    request `require_credentials` makes, so `doctor` passes exactly when `run` would get past it. Without a
    credential the listing goes unauthenticated (any answer then counts): the missing credential is its own check."""
    env = os.environ
    try:
        credential = find_credential(env)
    except AgentSetupError:
        credential = Credential("none", "no credential")
    try:
        check_endpoint(env, credential)
    except AgentSetupError as exc:
        return env.get("ANTHROPIC_BASE_URL") or DEFAULT_ENDPOINT, str(exc).removesuffix("; nothing was run")
    return env.get("ANTHROPIC_BASE_URL") or DEFAULT_ENDPOINT, None
