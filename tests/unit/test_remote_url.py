"""Which repo URLs a run by URL accepts: none that carries a credential, none that could be read as an option or
a transport helper; and how a URL is shown (never its credential)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.errors import InputError
from orchestrator.repo.remote import check_url, clone_path, redact


@pytest.mark.parametrize("url", ["https://github.com/org/repo.git", "ssh://git@github.com/org/repo.git",
                                 "git@github.com:org/repo.git", "file:///srv/git/repo.git", "/srv/git/repo.git"])
def test_plain_urls_are_accepted_as_given(url: str) -> None:
    assert check_url(f" {url} ") == url


@pytest.mark.parametrize("url", ["https://me:ghp_SECRET@github.com/org/repo.git",
                                 "https://ghp_SECRET@github.com/org/repo.git",
                                 "ssh://me:SECRET@host/repo.git", "me:SECRET@host:repo.git"])
def test_a_url_carrying_a_credential_is_refused_without_repeating_it(url: str) -> None:
    with pytest.raises(InputError, match="carries a credential") as refused:
        check_url(url)
    assert "SECRET" not in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("url", ["", "--upload-pack=touch /tmp/x", "ext::sh -c touch% /tmp/x", "https://a b/c",
                                 "https://host/r.git?access_token=SECRET"])
def test_what_is_not_a_plain_git_url_is_refused(url: str) -> None:
    with pytest.raises(InputError) as refused:
        check_url(url)
    assert "SECRET" not in str(refused.value)


def test_redact_hides_what_precedes_the_host() -> None:
    assert redact("https://me:tok@example.com/r.git") == "https://***@example.com/r.git"
    assert redact("me:pw@host:r.git") == "***@host:r.git"
    assert redact("https://example.com/r.git") == "https://example.com/r.git"


def test_one_clone_folder_per_url() -> None:
    first = clone_path(Path("/w"), "https://example.com/org/app.git")
    assert first == clone_path(Path("/w"), "https://example.com/org/app.git")
    assert first != clone_path(Path("/w"), "https://example.com/other/app.git")
    assert first.parent == Path("/w/clones") and first.name.startswith("app-")
