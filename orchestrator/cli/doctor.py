"""`doctor`: is everything a run needs in place? Never prints a credential."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from agents import AgentError, SessionLimits, SessionSettings, check_model, find_cli
from orchestrator import sandbox
from orchestrator.cli import output
from orchestrator.cli.preflight import endpoint_problem
from orchestrator.cli.tracing import tracing_check, tracing_endpoint
from orchestrator.errors import InputError
from orchestrator.processes import run
from orchestrator.repo.commands import git_sync
from orchestrator.settings import Settings
from orchestrator.store.checkpoints import CheckpointStore


def _check(name: str, ok: bool, detail: str) -> dict[str, Any]:
    return {"check": name, "ok": ok, "detail": detail}


def checks(repo: Path, db: str | None, cli_path: str | None = None, live: bool = True) -> list[dict[str, Any]]:
    results = []
    try:
        cli = find_cli(cli_path)
        version = run([cli, "--version"], repo, timeout=30)
        results.append(_check("claude CLI", version.ok, f"{cli}: {version.stdout.strip() or version.tail(2)}"))
    except AgentError as exc:
        results.append(_check("claude CLI", False, str(exc)))
    results.append(_credentials())
    git = git_sync(repo if repo.is_dir() else Path("."), "--version", timeout=30)
    results.append(_check("git", git.ok, git.stdout.strip() or git.tail(2)))
    inside = git_sync(repo, "rev-parse", "--show-toplevel", timeout=30)
    results.append(_check("repo", inside.ok, inside.stdout.strip() if inside.ok else f"{repo} is not a git repo"))
    store = CheckpointStore.for_repo(repo, db)
    try:
        store.check()
        if not store.is_postgres:
            store.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=store.path.parent):
                pass
        results.append(_check("checkpoint DB", True, f"{store} (writable)"))
    except (OSError, InputError) as exc:
        results.append(_check("checkpoint DB", False, f"{store}: {exc}"))
    results.append(_sandbox())
    if not live:  # --offline: nothing goes over the network, the free listing included
        results.append(_check("model endpoint", True, "not asked (--offline)"))
        results.append(_check("tracing", *tracing_check()))
        return results
    results.append(_endpoint())
    results.append(_tracing())
    results.append(_model_call(repo))
    return results


def _sandbox() -> dict[str, Any]:
    """Can the gate, setup and agents' Bash be sandboxed here (bubblewrap with namespaces, socat)?"""
    if not sandbox.agents_available():
        return _check("sandbox", False, sandbox.why_unavailable() + "; a change of yours seen around an agent"
                                                                     " session then fails its task")
    return _check("sandbox", True, f"{sandbox.bwrap()} works: the gate, setup and agents' commands can write only"
                                   " the run's worktrees, environment and caches")


def _model_call(repo: Path) -> dict[str, Any]:
    """One tiny real session: do the credentials in use get an answer? (costs a fraction of a cent)"""
    settings = SessionSettings(limits=SessionLimits(session_timeout_s=90, idle_timeout_s=60), retry_attempts=1)
    try:
        result = asyncio.run(check_model(repo, settings))
    except AgentError as exc:
        return _check("model call", False, str(exc))
    if result.status == "success":
        return _check("model call", True, f"the model answered (${result.cost_usd:.4f})")
    reasons = {"auth_error": "the credentials were rejected (401/403): check ANTHROPIC_API_KEY or `claude` login"}
    detail = reasons.get(result.status) or f"{result.status}: {(result.errors or ['no detail'])[-1]}"
    return _check("model call", False, detail)


def _credentials() -> dict[str, Any]:
    """Which credentials sessions will use (the API key wins over a login, as in Claude Code); never shown."""
    config = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):  # as `run` checks them
        if os.environ.get(name, "").strip():
            return _check("credentials", True, f"{name} is set (value not shown)")
    try:
        login = json.loads((config / ".credentials.json").read_text()).get("claudeAiOauth") or {}
    except (OSError, ValueError, AttributeError):
        login = {}
    if not login.get("accessToken"):
        return _check("credentials", False, f"set ANTHROPIC_API_KEY or log in with `claude` (no login in {config})")
    plan = login.get("subscriptionType") or "unknown plan"
    expires = float(login.get("expiresAt") or 0) / 1000
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(expires)) if expires else "unknown"
    if expires and expires < time.time() and not login.get("refreshToken"):
        return _check("credentials", False, f"Claude Code login in {config} expired {when}: run `claude` to log in")
    return _check("credentials", True, f"Claude Code login ({plan} subscription) in {config}, token valid until"
                                       f" {when}{' (renewed by the CLI)' if login.get('refreshToken') else ''}")


def _endpoint() -> dict[str, Any]:
    """The models listing `run` and `plan` ask for first (free), not just a connection: a refused key shows here."""
    where, problem = endpoint_problem()
    return _check("model endpoint", not problem, problem or f"{where} answers its models listing")


def _tracing() -> dict[str, Any]:
    """Whether runs are traced to LangSmith, where, and whether that endpoint takes connections."""
    ok, detail = tracing_check()
    if ok and (endpoint := tracing_endpoint()):
        where, problem = _reach(endpoint)
        if problem:
            return _check("tracing", False, f"{detail}; {where} {problem} (runs go on, traces are lost)")
    return _check("tracing", ok, detail)


def _reach(address: str) -> tuple[str, str | None]:
    """host:port of a URL, and why it takes no connection (None when it does)."""
    url = urlparse(address)
    try:
        host, port = url.hostname or "localhost", url.port or (443 if url.scheme == "https" else 80)
    except ValueError as exc:  # a port that is not a number
        return address, f"is not a usable URL: {exc}"
    try:
        with socket.create_connection((host, port), timeout=3):
            return f"{host}:{port}", None
    except OSError as exc:
        return f"{host}:{port}", f"not reachable: {exc}"


def run_doctor(args: argparse.Namespace, settings: Settings) -> int:
    results = checks(settings.repo, settings.db, settings.cli_path, live=not args.offline)
    if args.json:
        output.print_json(results)
    else:
        for item in results:
            print(f"{'ok  ' if item['ok'] else 'FAIL'}  {item['check']:<15} {item['detail']}")
    return 0 if all(item["ok"] for item in results) else 1
