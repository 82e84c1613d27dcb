"""How the real-history cases were chosen (run by hand, not by the bench): for each pair of consecutive releases,
the diff must change both code and tests, and at least one test of the new release must fail on the old code and
pass on the new (FAIL_TO_PASS, as SWE-bench's harness requires); those tests are written into the manifest.

`python -m benchmarks.real_history.select_cases pypi:cachetools 7.1.7 7.1.8 ...` prints one manifest entry per
qualifying pair (consecutive versions as given)."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.real_history.releases import Release, archive, sha256, tree
from orchestrator.gate import is_test_file

_OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR) (\S+)")


def write_tree(folder: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8", newline="")


IGNORE_PYTEST_DEPRECATIONS = "ignore::pytest.PytestDeprecationWarning"


def outcomes(files: dict[str, str], pythonpath: str) -> dict[str, str]:
    """Each test's outcome (PASSED / FAILED / ERROR) under pytest, which also runs unittest-style tests."""
    with tempfile.TemporaryDirectory() as tmp:
        write_tree(Path(tmp), files)
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=pythonpath, PYTEST_ADDOPTS="")
        # A release's `filterwarnings = error` meets a newer pytest's own deprecations at collection: those are
        # ignored, the rest stay errors (click's tests expect a UserWarning raised; `-p no:warnings` broke them).
        command = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                   "-W", IGNORE_PYTEST_DEPRECATIONS, "--continue-on-collection-errors"]
        done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=120, check=False)
    found: dict[str, str] = {}
    for line in done.stdout.splitlines():
        if match := _OUTCOME.match(line):
            found[match.group(2)] = match.group(1)
    return found


def changed(old: dict[str, str], new: dict[str, str]) -> list[str]:
    return sorted(path for path in {*old, *new} if old.get(path) != new.get(path))


def select(registry: str, package: str, old_version: str, new_version: str) -> dict[str, object] | None:
    old_release, new_release = Release(registry, package, old_version), Release(registry, package, new_version)
    old, new = tree(old_release), tree(new_release)
    diff = changed(old, new)
    tests = [path for path in diff if is_test_file(path)]
    code = [path for path in diff if path.endswith(".py") and not is_test_file(path)]
    if not tests or not code:
        return None
    pythonpath = "src" if any(path.startswith("src/") for path in new) else "."
    tests_only = {**old, **{path: new[path] for path in tests if path in new}}
    for path in tests:
        if path not in new:
            tests_only.pop(path, None)
    without_fix, after = outcomes(tests_only, pythonpath), outcomes(new, pythonpath)
    # a test missing without the fix failed with its module (an import of what the fix adds): it fails too
    fail_to_pass = sorted(t for t, outcome in after.items() if outcome == "PASSED" and without_fix.get(t) != "PASSED")
    if not fail_to_pass:
        return None
    return {"registry": registry, "package": package, "old": old_version, "new": new_version,
            "pythonpath": pythonpath, "code_changed": code, "tests_changed": tests, "fail_to_pass": fail_to_pass,
            "new_red": sorted(t for t, outcome in after.items() if outcome != "PASSED"),
            "sha256": {v: sha256(archive(r)) for v, r in ((old_version, old_release), (new_version, new_release))},
            "files": {v: archive(r).name for v, r in ((old_version, old_release), (new_version, new_release))}}


def main(argv: list[str]) -> None:
    registry, package = argv[0].split(":", 1)
    versions = argv[1:]
    for old_version, new_version in itertools.pairwise(versions):
        try:
            entry = select(registry, package, old_version, new_version)
        except (OSError, RuntimeError, subprocess.SubprocessError) as error:
            print(f"# {package} {old_version} -> {new_version}: {error}", file=sys.stderr)
            continue
        print(json.dumps(entry) if entry else f"# {package} {old_version} -> {new_version}: not a case", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
