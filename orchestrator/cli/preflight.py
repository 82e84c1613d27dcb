"""What `plan` and `run` check before they write or spend anything: a key or a login, and an endpoint that answers."""

from __future__ import annotations

import os
from collections.abc import Sequence

from agents.credentials import (
    DEFAULT_ENDPOINT,
    Credential,
    check_credentials,
    check_endpoint,
    find_credential,
    unknown_models,
)
from agents.errors import AgentSetupError
from orchestrator.errors import InputError
from orchestrator.plan.model import FeaturePlan


def require_credentials(models: Sequence[str] = ()) -> None:
    """Refuse in one line (InputError: exit 2) unless the sessions would authenticate and reach the model, and
    the endpoint's listing (when it gives one) knows each of `models` (the plan's `attempt_models`)."""
    try:
        credential = check_credentials()
        listed = check_endpoint(os.environ, credential) if models and credential is not None else None
    except AgentSetupError as exc:
        raise InputError(str(exc)) from None
    if unknown := unknown_models(list(dict.fromkeys(models)), listed):
        raise InputError(f"attempt_models names {', '.join(repr(m) for m in unknown)}, which the model endpoint"
                         f" does not list (it lists {', '.join(listed or ())}; or a CLI alias: sonnet, opus, haiku):"
                         " fix the plan")


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


def attempt_models(plan: FeaturePlan) -> list[str]:
    """Every model the plan's `attempt_models` name, the feature's and its tasks'."""
    return list(dict.fromkeys([*plan.attempt_models, *(m for task in plan.tasks for m in task.attempt_models)]))
