"""One settings model: flags over ORCHESTRATOR_* over .autobuild/config.yaml over defaults; where things are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.errors import InputError
from orchestrator.settings import CONFIG_FILE, RunSettings, Settings, load_settings
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.locations import choose_db, default_db, find_repo, remember_db, without_credentials
from tests.conftest import git


def _config(repo: Path, text: str) -> None:
    (repo / CONFIG_FILE).parent.mkdir(parents=True, exist_ok=True)
    (repo / CONFIG_FILE).write_text(text)


def test_flags_win_over_variables_which_win_over_the_config_file_which_wins_over_defaults(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, "parallel: 3\nmodel: from-config\nmax-turns: 4\nbudget_usd: 2.5\n")
    monkeypatch.setenv("ORCHESTRATOR_MODEL", "from-env")
    monkeypatch.setenv("ORCHESTRATOR_MAX_TURNS", "6")
    settings = load_settings(RunSettings, tmp_path, target="FEAT-001", max_turns=8, parallel=None)
    assert (settings.parallel, settings.model, settings.max_turns, settings.budget_usd) == (3, "from-env", 8, 2.5)
    assert settings.session_timeout == 1800.0, "a default nobody overrode"
    assert settings.options().parallel == 3, "the graph's context carries the layered values"


def test_what_a_run_must_be_told_directly_never_comes_from_a_variable_or_the_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCHESTRATOR_FRESH", "1")
    monkeypatch.setenv("ORCHESTRATOR_DRY_RUN", "1")
    settings = load_settings(RunSettings, tmp_path, target="FEAT-001")
    assert not settings.fresh and not settings.dry_run
    _config(tmp_path, "fresh: true\n")
    with pytest.raises(InputError, match="unknown setting 'fresh'"):
        load_settings(RunSettings, tmp_path, target="FEAT-001")


@pytest.mark.parametrize(("text", "message"), [
    ("paralel: 2\n", r"config.yaml: unknown setting 'paralel'; known: .*parallel"),
    ("parallel: lots\n", r"bad value for --parallel \(from the flag, ORCHESTRATOR_PARALLEL or .autobuild/config"),
    ("- parallel\n", r"must be a mapping of settings"),
    ("parallel: [1\n", r"config.yaml can't be read: .*fix or remove it"),
    ("a: &a [*a, *a]\n" * 2, r"can't be read|unknown setting"),
])
def test_a_bad_config_file_is_one_line_naming_the_file_and_the_setting(tmp_path: Path, text: str,
                                                                      message: str) -> None:
    _config(tmp_path, text)
    with pytest.raises(InputError, match=message) as caught:
        load_settings(Settings, tmp_path)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("text", "message"), [
    ("parallel: true\n", r"bad value for --parallel .*not true/false"),
    ("max_turns: false\n", r"bad value for --max-turns .*not true/false"),
    ("budget_usd: -1\n", r"--budget-usd must be positive \(from the flag, an ORCHESTRATOR_\* variable or"),
    ("est_session_usd: -0.5\n", r"EST_SESSION_USD must not be negative"),
    ("verify_timeout: -3\n", r"--verify-timeout must be positive"),
    ("session_timeout: .inf\n", r"--session-timeout must be a finite number"),
    ("drain_grace: .nan\n", r"--drain-grace must be a finite number"),
    ("trace_flush_timeout: 100000\n", r"TRACE_FLUSH_TIMEOUT must be between 0 and 300"),
    ("trace_flush_timeout: -1\n", r"TRACE_FLUSH_TIMEOUT must be between 0 and 300"),
])
def test_config_values_are_validated_like_flags_for_every_command(tmp_path: Path, text: str, message: str) -> None:
    _config(tmp_path, text)
    for kind, extra in ((Settings, {}), (RunSettings, {"target": "FEAT-001"})):
        with pytest.raises(InputError, match=message) as caught:
            load_settings(kind, tmp_path, **extra)
        assert "\n" not in str(caught.value)


def test_a_flag_that_is_fine_passes_and_an_env_number_still_parses(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCHESTRATOR_TRACE_FLUSH_TIMEOUT", "0")
    _config(tmp_path, "keep_worktrees: true\nparallel: 2\n")
    settings = load_settings(RunSettings, tmp_path, target="FEAT-001")
    assert (settings.trace_flush_timeout, settings.keep_worktrees, settings.parallel) == (0.0, True, 2)


def test_the_repo_is_found_from_a_subfolder_and_from_a_task_worktree(sample_repo: Path, tmp_path: Path) -> None:
    (sample_repo / "deep" / "er").mkdir(parents=True)
    assert find_repo(sample_repo / "deep" / "er") == sample_repo.resolve()
    worktree = tmp_path / "linked"
    git(sample_repo, "worktree", "add", "--detach", str(worktree))
    assert find_repo(worktree) == sample_repo.resolve()
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    assert find_repo(outside) == outside.resolve()
    with pytest.raises(InputError, match="does not exist"):
        find_repo(tmp_path / "missing")


def test_a_runs_db_is_remembered_per_feature_without_its_password(tmp_path: Path) -> None:
    custom = str(tmp_path / "elsewhere.sqlite")
    assert choose_db(tmp_path, None, "FEAT-001") == default_db(tmp_path)
    remember_db(tmp_path, "FEAT-001", custom)
    remember_db(tmp_path, "FEAT-002", "postgresql://bob:s3cret@db.example:5432/ab?sslmode=require&password=s3cret")
    assert choose_db(tmp_path, None, "FEAT-001") == custom
    assert choose_db(tmp_path, None, "FEAT-009") == default_db(tmp_path), "another feature: the default"
    assert choose_db(tmp_path, "other.sqlite", "FEAT-001") == str(Path("other.sqlite").resolve()), "a flag wins"
    written = (tmp_path / ".autobuild" / "db.json").read_text()
    assert "s3cret" not in written
    assert json.loads(written)["features"]["FEAT-002"] == "postgresql://bob@db.example:5432/ab?sslmode=require"
    assert choose_db(tmp_path, None, None).startswith("postgresql://bob@"), "no feature: the last run's DB"
    assert without_credentials("/plain/path.sqlite") == "/plain/path.sqlite"
    with pytest.raises(InputError, match="unsupported --db scheme mysql://"):
        choose_db(tmp_path, "mysql://x/y")


def test_the_repo_s_config_file_can_not_switch_on_hooks_commands_or_another_cli(tmp_path: Path) -> None:
    for line in ("repo_hooks: true", "on_event: touch /tmp/pwned", "cli_path: ./evil.sh"):
        _config(tmp_path, line + "\n")
        with pytest.raises(InputError, match="unknown setting"):
            load_settings(RunSettings, tmp_path, target="FEAT-001")


def test_a_relative_db_in_the_config_file_is_the_repo_s_wherever_the_command_runs(tmp_path: Path) -> None:
    _config(tmp_path, "db: state/ck.sqlite\n")
    assert load_settings(Settings, tmp_path).db == str((tmp_path / "state" / "ck.sqlite").resolve())


def test_postgres_urls_lose_every_password_and_keep_their_shape() -> None:
    socket_url = "postgresql:///autobuild?host=/var/run/postgresql&password=x"
    assert without_credentials(socket_url) == "postgresql:///autobuild?host=%2Fvar%2Frun%2Fpostgresql"
    shown = str(CheckpointStore("postgresql://u:hunter2@127.0.0.1:1/x?user=u&password=hunter2&sslpassword=k"))
    assert "hunter2" not in shown and "sslpassword" not in shown and shown.startswith("postgresql://u@127.0.0.1:1/x")
