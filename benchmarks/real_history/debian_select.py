"""How the Go and Rust real-history cases were chosen (run by hand, not by the bench): consecutive Debian releases
of one module or crate whose diff changes both code and tests, with at least one test of the new release failing
on the old code and passing on the new (FAIL_TO_PASS, by the gate's own ids), each release building and passing
its tests offline under the installed go or cargo.

`python -m benchmarks.real_history.debian_select go golang-github-google-uuid-dev 1.2.0-1 1.3.0-1 ...` prints
one JSON object per release (`release`: the manifest's entry) and per qualifying pair (`case`), and a `# ...` line
for each pair dropped, with why."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.real_history import debian
from benchmarks.real_history.releases import RELEASES, sha256
from benchmarks.real_history.select_cases import changed, write_tree
from orchestrator.gate import Observed, cargo_test, go_test, is_test_file

VERIFY = {"go": "go test ./...", "rust": "cargo test"}
OFFLINE = {"GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "CARGO_NET_OFFLINE": "true"}


def root(path: Path, ecosystem: str) -> str:
    """The module's folder (the deepest folder holding a go.mod) or the crate's folder in the package."""
    listing = subprocess.run(["dpkg-deb", "-c", str(path)], capture_output=True, text=True, check=True).stdout
    names = [line.split()[-1].removeprefix("./") for line in listing.splitlines()]
    marker = "/go.mod" if ecosystem == "go" else "/Cargo.toml"
    found = sorted((n.removesuffix(marker) for n in names if n.endswith(marker) and
                    (ecosystem == "go" or re.fullmatch(r"usr/share/cargo/registry/[^/]+/Cargo\.toml", n))),
                   key=len)
    if not found:
        raise RuntimeError(f"{path.name}: no {marker.lstrip('/')} in the package")
    return found[0]


def outcomes(files: dict[str, str], ecosystem: str, target_dir: Path) -> tuple[Observed | None, str]:
    with tempfile.TemporaryDirectory() as tmp:
        write_tree(Path(tmp), files)
        env = dict(os.environ, **OFFLINE, CARGO_TARGET_DIR=str(target_dir))
        command = ["go", "test", "-v", "./..."] if ecosystem == "go" else ["cargo", "test", "--no-fail-fast"]
        # one stream, as the gate reads it: cargo's "Running <target>" lines (stderr) name the tests after them
        done = subprocess.run(command, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=1200, check=False)
    output = done.stdout
    return (go_test(output) if ecosystem == "go" else cargo_test(output)), output


def select(ecosystem: str, package: str, old_version: str, new_version: str, target_dir: Path) -> dict[str, object]:
    old_path, new_path = (debian.download(package, old_version, RELEASES),
                            debian.download(package, new_version, RELEASES))
    old_root, new_root = root(old_path, ecosystem), root(new_path, ecosystem)
    old, new = debian.tree(old_path, old_root), debian.tree(new_path, new_root)
    diff = changed(old, new)
    tests = [path for path in diff if is_test_file(path)]
    suffix = ".go" if ecosystem == "go" else ".rs"
    code = [path for path in diff if path.endswith(suffix) and not is_test_file(path)]
    if not code:
        raise RuntimeError("the diff changes no code")
    inline = [path for path in code if path in old and path in new and path.endswith(".rs")
              and re.search(r"#\[cfg\(test\)\]|#\[test\]", new[path]) and old[path] != new[path]]
    if not tests:  # tests inside code files can't be run without their file's fix: FAIL_TO_PASS can't be told
        raise RuntimeError(f"the diff changes no test file{' (only tests inside code files)' if inline else ''}")
    tests_only = {path: text for path, text in {**old, **{p: new[p] for p in tests if p in new}}.items()
                  if not (path in tests and path not in new)}
    before, before_output = outcomes(old, ecosystem, target_dir)
    after, after_output = outcomes(new, ecosystem, target_dir)
    if before is None or not before.passing or before.failing:
        raise RuntimeError(f"the old release's tests don't all pass offline: {_tail(before_output)}")
    if after is None or not after.passing or after.failing:
        raise RuntimeError(f"the new release's tests don't all pass offline: {_tail(after_output)}")
    without_fix, _ = outcomes(tests_only, ecosystem, target_dir)
    passing_without = set(without_fix.passing or []) if without_fix is not None else set()
    # Only tests of test files: a doctest or #[cfg(test)] test in a code file the release added or changed is
    # "missing" without the fix, but tests-only can't carry it, so it says nothing about the fix (typenum 1.20.1).
    fail_to_pass = sorted(t for t in set(after.passing) - passing_without
                          if not t.startswith(("doc-tests ", "src/")))
    if not fail_to_pass:
        raise RuntimeError("no test of a test file fails without the fix")
    return {"registry": "debian", "package": package, "old": old_version, "new": new_version, "ecosystem": ecosystem,
            "runner": "go test" if ecosystem == "go" else "cargo test", "verify": VERIFY[ecosystem],
            "code_changed": code, "tests_changed": tests, "inline_tests_changed": inline,
            "fail_to_pass": fail_to_pass, "base_red": [], "new_red": [],
            "roots": {old_version: old_root, new_version: new_root},
            "sha256": {old_version: sha256(old_path), new_version: sha256(new_path)},
            "files": {old_version: f"{debian.DEBS}/{old_path.name}", new_version: f"{debian.DEBS}/{new_path.name}"}}


def _tail(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    return " | ".join(lines[-3:])[:400]


def main(argv: list[str]) -> None:
    ecosystem, package, *versions = argv
    target_dir = Path(tempfile.gettempdir()) / f"real-history-target-{package}"
    for old_version, new_version in itertools.pairwise(versions):
        try:
            entry = select(ecosystem, package, old_version, new_version, target_dir)
        except (OSError, RuntimeError, subprocess.SubprocessError) as error:
            print(f"# {package} {old_version} -> {new_version}: {error}", flush=True)
            continue
        print(json.dumps({"case": entry}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
