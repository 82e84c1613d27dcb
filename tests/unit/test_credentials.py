"""Which credential the sessions would use, and when a login counts (present and unexpired, or renewable)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from agents.credentials import check_credentials, find_credential
from agents.errors import AgentSetupError
from agents.testing.scripted_model import ScriptedModel
from orchestrator.cli.doctor import _credentials


def login(folder: Path, **entry: object) -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".credentials.json").write_text(json.dumps({"claudeAiOauth": entry}))
    return {"CLAUDE_CONFIG_DIR": str(folder)}


def test_a_key_in_the_environment_wins_over_a_login(tmp_path: Path) -> None:
    env = login(tmp_path, accessToken="tok", expiresAt=4102444800000) | {"ANTHROPIC_API_KEY": "sk-x"}
    assert find_credential(env).kind == "api_key"
    assert find_credential({**env, "ANTHROPIC_API_KEY": " "}).kind == "login"
    assert find_credential({"CLAUDE_CODE_OAUTH_TOKEN": "t", "CLAUDE_CONFIG_DIR": str(tmp_path / "x")}).kind == \
        "oauth_token"


def test_a_login_counts_while_unexpired_or_renewable(tmp_path: Path) -> None:
    now = 2_000_000_000.0
    assert find_credential(login(tmp_path / "a", accessToken="t", expiresAt=(now + 60) * 1000), now).kind == "login"
    renewable = login(tmp_path / "b", accessToken="t", expiresAt=(now - 60) * 1000, refreshToken="r")
    assert find_credential(renewable, now).kind == "login"
    with pytest.raises(AgentSetupError, match="expired 2033-05-18 03:32 UTC"):
        find_credential(login(tmp_path / "c", accessToken="t", expiresAt=(now - 60) * 1000), now)


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"claudeAiOauth": {"accessToken": ""}}'])
def test_no_or_a_damaged_login_names_both_ways_in(tmp_path: Path, text: str) -> None:
    tmp_path.joinpath(".credentials.json").write_text(text)
    with pytest.raises(AgentSetupError, match=r"no credentials: set ANTHROPIC_API_KEY, or log in with `claude`"):
        find_credential({"CLAUDE_CONFIG_DIR": str(tmp_path)})


def test_other_providers_are_left_to_their_cloud() -> None:
    assert check_credentials({"CLAUDE_CODE_USE_BEDROCK": "1"}) is None


def test_the_scripted_model_lists_its_models_and_the_check_passes(tmp_path: Path) -> None:
    with ScriptedModel({"sessions": []}) as model:
        with urllib.request.urlopen(f"{model.base_url}/v1/models", timeout=10) as response:
            listing = json.loads(response.read())
        assert [entry["type"] for entry in listing["data"]] == ["model"] * len(listing["data"]) and listing["data"]
        env = {"ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_API_KEY": "sk-x"}
        credential = check_credentials(env)
        assert credential is not None and credential.kind == "api_key" and model.listings == 2
        assert model.requests == [], "a listing is no session"


def test_doctor_names_the_tokens_run_accepts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # doctor's credentials check alone: its other checks reach the endpoint
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "t")
    found = _credentials()
    assert found["ok"] and found["detail"] == "CLAUDE_CODE_OAUTH_TOKEN is set (value not shown)"
