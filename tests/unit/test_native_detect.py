"""Which command gates a Go, Rust or C repo: a nested Go module that `go test ./...` at the top doesn't enter is
gated in its own folder, unless go.work or the maintainers' file reaches it; CI's ctest step beats a Makefile
target that only builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.gate.detect import detect_test_command


def repo_with(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


GO_TOP = {"go.mod": "module example.com/top\n", "arc/go.mod": "module example.com/arc\n"}


def test_a_nested_go_module_under_a_makefile_is_gated_in_its_own_folder(tmp_path: Path) -> None:
    choice = detect_test_command(repo_with(tmp_path, {**GO_TOP, "Makefile": "test:\n\tgo test ./...\n"}))
    assert [(p["path"], p["command"]) for p in choice.packages] == [(".", "make test"), ("arc", "go test ./...")]
    assert "not entered by `go test ./...`" in choice.source
    assert not any("run by the top's command" in other for other in choice.also)


@pytest.mark.parametrize("reach", [{"Makefile": "test:\n\tgo test ./...\n\tcd arc && go test ./...\n"},
                                   {"Makefile": "test:\n\tgo test ./... ./arc/...\n", "go.work": "go 1.19\n\nuse (\n"
                                                                                         "\t.\n\t./arc\n)\n"}])
def test_a_nested_go_module_the_top_reaches_stays_with_the_top(tmp_path: Path, reach: dict[str, str]) -> None:
    choice = detect_test_command(repo_with(tmp_path, {**GO_TOP, **reach}))
    assert choice.command == "make test" and not choice.packages
    assert "`go test ./...` in arc/ (go.mod; run by the top's command, not alone)" in choice.also
