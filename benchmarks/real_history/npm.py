"""The real-history bench's npm pairs: packages whose published tarball ships its node:test tests, each pair's
node_modules (the small packages its code requires, fetched from the registry like the releases), the JS variants,
and how the pairs were chosen (FAIL_TO_PASS by node's own runner, with the gate's reporter).

`python -m benchmarks.real_history.npm @fastify/error 4.1.0 4.2.0 ...` prints one manifest entry per qualifying
pair (consecutive versions as given); `--vendor=NAME@VERSION` adds a dependency to each pair's node_modules."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.real_history import js_bend, unfixed
from benchmarks.real_history.releases import Release, archive, sha256, tree
from benchmarks.real_history.variants import Files, Variant, _toward, changed
from orchestrator.gate import NODE_REPORTER, is_test_file
from orchestrator.gate import RUNNER_SHIM as SHIM

VERIFY = "node --test"
"""The gate's command for every npm pair: the packages' `test:unit` script without its coverage wrapper (c8,
a dev dependency not in the tarball)."""
_CODE = (".js", ".cjs", ".mjs")


def vendored(case: dict[str, Any]) -> dict[str, Files]:
    """The case's dependencies by name: each one's files from its own release (the registry's tarball)."""
    return {name: tree(Release("npm", name, version)) for name, version in (case.get("vendor") or {}).items()}


def write_node_modules(repo: Path, case: dict[str, Any]) -> None:
    """The repo's node_modules (git-excluded, as a real checkout's install is): the case's dependencies."""
    folder = repo / "node_modules"
    for name, files in vendored(case).items():
        for path, text in files.items():
            target = folder / name / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="")
    folder.mkdir(exist_ok=True)
    with (repo / ".git" / "info" / "exclude").open("a", encoding="utf-8") as exclude:
        exclude.write("node_modules\n")


def variants(old: Files, new: Files, fail_to_pass: list[str], only: Callable[[str], bool] = lambda _: True) \
        -> list[Variant]:
    """As variants.variants for the PyPI pairs (gold, tests-only, the fix reverted, the cheats with a blind
    coach), the cheats bending JS test files."""
    diff = changed(old, new)
    tests = [path for path in diff if is_test_file(path)]
    code = [path for path in diff if not is_test_file(path)]
    accepted = tuple(path for path in tests if path in old)
    found = [Variant("gold", old, _toward(new, diff), True, accepted),
             Variant("tests-only", old, _toward(new, tests), False, accepted),
             Variant("the fix reverted", new, _toward(old, code), False)]
    for name, how in js_bend.CHEATS.items():
        bent = js_bend.bend(new, old, fail_to_pass, how)
        if bent:
            found.append(Variant(name, new, {**_toward(old, code), **bent}, False))
    found += unfixed.variants(old, new, fail_to_pass, tests, bend=js_bend.bend)
    return [variant for variant in found if only(variant.name)]


def outcomes(files: Files, case: dict[str, Any]) -> dict[str, str]:
    """Each node:test test's outcome (pass / fail / skip / todo) by the gate's id `file > suite > test`."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8", newline="")
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        write_node_modules(root, case)
        report = root / ".report.jsonl"
        env = dict(os.environ, NODE_OPTIONS=f"--test-reporter={SHIM / NODE_REPORTER}"
                                            f" --test-reporter-destination={report}")
        subprocess.run(VERIFY.split(), cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)
        found: dict[str, str] = {}
        for line in report.read_text(encoding="utf-8").split("\n") if report.exists() else []:
            if not line.strip():
                continue
            event = json.loads(line)
            if not event.get("parent") or event.get("outcome") == "fail":
                found[" > ".join([event["file"], *event["path"]])] = event["outcome"]
    return found


def select(package: str, old_version: str, new_version: str, vendor: dict[str, str]) -> dict[str, Any] | None:
    """The pair's manifest entry when its diff changes code and tests and a new test fails without the fix."""
    old_release, new_release = Release("npm", package, old_version), Release("npm", package, new_version)
    old, new = tree(old_release), tree(new_release)
    diff = changed(old, new)
    tests = [path for path in diff if is_test_file(path) and path.endswith(_CODE)]
    code = [path for path in diff if path.endswith(_CODE) and not is_test_file(path)]
    if not tests or not code:
        return None
    case: dict[str, Any] = {"vendor": vendor}
    tests_only = {path: text for path, text in {**old, **_toward(new, tests)}.items() if text is not None}
    base = outcomes(old, case)
    if any(_whole_file(test) for test, outcome in base.items() if outcome == "fail"):
        return None  # a test file that doesn't run under node --test (tap's, jest's): not this runner's release
    without_fix, after = outcomes(tests_only, case), outcomes(new, case)
    fail_to_pass = sorted(t for t, outcome in after.items() if outcome == "pass" and without_fix.get(t) != "pass")
    if not fail_to_pass:
        return None
    releases = [(old_version, old_release), (new_version, new_release)]
    meta = json.loads(new.get("package.json", "{}"))
    return {"registry": "npm", "package": package, "old": old_version, "new": new_version,
            "ecosystem": "javascript", "runner": "node --test", "tests": "test",
            "licence": meta.get("license", ""), "source": f"https://www.npmjs.com/package/{package}",
            "vendor": vendor, "code_changed": code, "tests_changed": tests, "fail_to_pass": fail_to_pass,
            "base_red": sorted(t for t, outcome in base.items() if outcome == "fail"),
            "new_red": sorted(t for t, outcome in after.items() if outcome == "fail"), "verify": VERIFY,
            "sha256": {v: sha256(archive(r)) for v, r in releases},
            "files": {v: archive(r).name for v, r in releases}}


def _whole_file(test_id: str) -> bool:
    """node's id for a file that failed as a whole (`test/x.test.js > test/x.test.js`): it declared no test."""
    parts = test_id.split(" > ")
    return len(parts) == 2 and parts[0] == parts[1]  # the file, then its own name


def main(argv: list[str]) -> None:
    vendor = dict(a.removeprefix("--vendor=").rsplit("@", 1) for a in argv if a.startswith("--vendor="))
    package, *versions = [a for a in argv if not a.startswith("--")]
    if shutil.which("node") is None:
        raise SystemExit("error: node is not on PATH: the npm pairs run node --test (install Debian's nodejs)")
    for old_version, new_version in itertools.pairwise(versions):
        try:
            entry = select(package, old_version, new_version, vendor)
        except (OSError, RuntimeError, subprocess.SubprocessError) as error:
            print(f"# {package} {old_version} -> {new_version}: {error}", file=sys.stderr)
            continue
        print(json.dumps(entry) if entry else f"# {package} {old_version} -> {new_version}: not a case", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
