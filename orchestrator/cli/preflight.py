"""What `plan` and `run` check before they write or spend anything: a key or a login, and an endpoint that answers."""

from __future__ import annotations

import os

from agents.credentials import DEFAULT_ENDPOINT, Credential, check_credentials, check_endpoint, find_credential
from agents.errors import AgentSetupError
from orchestrator.errors import InputError
from orchestrator.plan.model import load_target
from orchestrator.repo import confined
from orchestrator.settings import RunSettings


def require_credentials() -> None:
    """Refuse in one line (InputError: exit 2) unless the sessions would authenticate and reach the model."""
    try:
        check_credentials()
    except AgentSetupError as exc:
        raise InputError(str(exc)) from None


def refuse_early(settings: RunSettings) -> None:
    """What a run refuses before its modules load (they take seconds): bad settings, a run folder linked out, a
    plan that doesn't load, then no key or login at all (asking nothing of the network: the endpoint is asked
    under the run's lock). Each is one line (InputError: exit 2); `runner.prepare` checks them again, with more."""
    settings.validate()
    confined.check_own_folders(settings.repo)
    load_target(settings.repo, settings.target, settings.plan)
    try:
        find_credential(os.environ)
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
