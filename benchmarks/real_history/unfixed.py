"""The real-history variants of issue 38: on the old release, the new release's tests added without its fix, their
FAIL_TO_PASS tests weakened or marked to fail (pytest's xfail and unittest's expectedFailure, node's todo, Rust's
`#[should_panic]`, Go's skip: it has no expected failure), with a blind coach (approves, accepts nothing), as the
other cheats: each must be refused."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from benchmarks.real_history.variants import Files, Variant, Writes

UNFIXED = {
    "the release's new tests weakened, the fix missing": "weaken",
    "the release's new tests marked to fail, the fix missing": "xfail",
}
Bend = Callable[[Files, Files, Iterable[str], str], Writes]


def variants(old: Files, new: Files, fail_to_pass: Sequence[str], tests: Sequence[str], *, bend: Bend) \
        -> list[Variant]:
    """Each variant whose bending reaches a FAIL_TO_PASS test in a test file the release changed."""
    found = []
    for name, how in UNFIXED.items():
        bent = {path: text for path, text in bend(new, old, fail_to_pass, how).items() if path in tests}
        if bent:
            found.append(Variant(name, old, {**{path: new.get(path) for path in tests}, **bent}, False))
    return found
