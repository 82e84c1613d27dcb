"""Credentials before anything: is there a key or a login, and does the model endpoint answer? Spends nothing.

Claude Code authenticates with, in order: an OAuth token or auth token in the environment, `ANTHROPIC_API_KEY`,
else the login `claude` stored in its config folder (`.credentials.json`; the macOS Keychain on a Mac). The check
asks the endpoint for its models listing (`GET /v1/models`), which costs no tokens.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from agents.errors import AgentSetupError

DEFAULT_ENDPOINT = "https://api.anthropic.com"
_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_OTHER_PROVIDERS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")
_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Credential:
    """What the sessions will authenticate with (never the secret's value in messages)."""

    kind: str
    """`api_key`, `auth_token`, `oauth_token` (from the environment) or `login` (Claude Code's own)."""
    source: str
    """Where it was found: the variable's name, or the credentials file."""
    secret: str = ""


def config_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def find_credential(env: Mapping[str, str], now: float | None = None) -> Credential:
    """The credential Claude Code would use, or AgentSetupError saying what to set or do."""
    kinds = {"ANTHROPIC_API_KEY": "api_key", "ANTHROPIC_AUTH_TOKEN": "auth_token",
             "CLAUDE_CODE_OAUTH_TOKEN": "oauth_token"}
    for name in _KEYS:
        if env.get(name, "").strip():
            return Credential(kinds[name], name, env[name].strip())
    path = config_dir(env) / ".credentials.json"
    try:
        login = json.loads(path.read_text()).get("claudeAiOauth") or {}
    except FileNotFoundError:
        if sys.platform == "darwin":  # Claude Code keeps a Mac's login in the Keychain: the endpoint check decides
            return Credential("login", "the macOS Keychain")
        login = {}
    except (OSError, ValueError, AttributeError):
        login = {}
    if not isinstance(login, dict) or not login.get("accessToken"):
        raise AgentSetupError(f"no credentials: set ANTHROPIC_API_KEY, or log in with `claude` (no login in {path});"
                              " nothing was run")
    expires_ms = float(login.get("expiresAt") or 0)
    # An expired access token with a refresh token is renewed by the CLI on its first call: that login counts.
    if expires_ms and expires_ms / 1000 < (time.time() if now is None else now) and not login.get("refreshToken"):
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(expires_ms / 1000))
        raise AgentSetupError(f"the Claude Code login in {path} expired {when}: run `claude` and log in again, or"
                              " set ANTHROPIC_API_KEY; nothing was run")
    return Credential("login", str(path))


def check_endpoint(env: Mapping[str, str], credential: Credential, timeout_s: float = _TIMEOUT_S
                   ) -> tuple[str, ...] | None:
    """The endpoint answers its models listing; a key it refuses (401/403) is named. Any other answer counts:
    a gateway without the listing still answers, and the CLI retries what is passing (429, 5xx). Returns the
    models the listing names, None when it names none or not all (another answer, a listing of several pages)."""
    base = (env.get("ANTHROPIC_BASE_URL") or DEFAULT_ENDPOINT).rstrip("/")
    url = urlparse(base)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise AgentSetupError(f"ANTHROPIC_BASE_URL {base!r} is not an http(s) URL: fix it or unset it")
    headers = {"anthropic-version": "2023-06-01", "user-agent": "autobuild-credentials-check"}
    if credential.kind == "api_key":
        headers["x-api-key"] = credential.secret
    elif credential.secret:
        headers["authorization"] = f"Bearer {credential.secret}"
    request = urllib.request.Request(f"{base}/v1/models", headers=headers, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # http(s) only: checked above
            body = response.read(_LISTING_BYTES)
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403) and credential.secret:
            raise AgentSetupError(f"{url.hostname} refused {credential.source} ({exc.code}): check its value, or"
                                  " unset it to use your `claude` login; nothing was run") from None
        return None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise AgentSetupError(f"the model endpoint {base} does not answer ({reason}): check your network or"
                              " ANTHROPIC_BASE_URL; nothing was run") from None
    return _listed(body)


_LISTING_BYTES = 1 << 20
CLI_ALIASES = frozenset({"default", "sonnet", "opus", "haiku", "opusplan"})
"""Model names the CLI resolves itself (`--model sonnet`, also as `sonnet[1m]`)."""


def _listed(body: bytes) -> tuple[str, ...] | None:
    """The model ids of a whole models listing, None for anything else."""
    try:
        listing = json.loads(body)
        entries = listing["data"]
        ids = tuple(str(entry["id"]) for entry in entries)
    except (ValueError, TypeError, KeyError):
        return None
    return ids if ids and not listing.get("has_more") else None


def unknown_models(names: Sequence[str], listed: Sequence[str] | None) -> list[str]:
    """The names neither the CLI (its aliases) nor the endpoint's listing knows; none when there is no listing. A
    listed id's name without its date (`claude-sonnet-4-5` for `claude-sonnet-4-5-20250929`) is known."""
    if not listed:
        return []
    return [name for name in names if name.split("[", 1)[0] not in CLI_ALIASES and name not in listed
            and not any(re.fullmatch(rf"{re.escape(name)}-\d{{8}}", model) for model in listed)]


def check_credentials(env: Mapping[str, str] | None = None) -> Credential | None:
    """A credential is there and the endpoint answers, else AgentSetupError in one line. Runs on Bedrock, Vertex
    or Foundry authenticate through their cloud's own chain: not checked here (None)."""
    env = os.environ if env is None else env
    if any(env.get(name, "").strip() not in ("", "0") for name in _OTHER_PROVIDERS):
        return None
    credential = find_credential(env)
    check_endpoint(env, credential)
    return credential
