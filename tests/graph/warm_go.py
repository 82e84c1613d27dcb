"""A warm Go build cache for the graph tests' `go test` gates: built once (per Go toolchain, in the system's tmp,
shared by every xdist worker and later sessions) and copied into a run's gate cache before the run starts.

The gate gives each feature a build cache of its own (GOCACHE in its `_gate-own/`), so the first `go test` of
every test compiled and vetted the standard library's `testing` and all it imports again: ~2 CPU-s of the ~2.5 a
first run costs. The warm cache holds only that: it is made by a module of its own (`example.com/warm`), so none of
a test's packages nor their test results are in it, and every run still compiles, vets and runs the code under test.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from orchestrator import sandbox

WARM_MODULE = {
    "go.mod": "module example.com/warm\n\ngo 1.19\n",
    "warm.go": "package warm\n\nfunc One() int { return 1 }\n",
    # The standard library packages the tests' Go modules import (only `testing` today).
    "warm_test.go": "package warm\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n"
                    "\t\tt.Fatal(\"want 1\")\n\t}\n}\n",
}


def _go_identity(go: str) -> str:
    """What the cache's entries depend on beyond the sources: the toolchain and its target."""
    return subprocess.run([go, "env", "GOVERSION", "GOROOT", "GOOS", "GOARCH", "CGO_ENABLED"], check=True,
                          capture_output=True, text=True).stdout


def warm_cache() -> Path | None:
    """The warm build cache (None without go): made on first use, atomically (a rename), never changed after."""
    go = shutil.which("go")
    if go is None:
        return None
    key = hashlib.sha256((_go_identity(go) + repr(sorted(WARM_MODULE.items()))).encode()).hexdigest()[:16]
    place = Path(tempfile.gettempdir()) / f"autobuild-tests-gocache-{key}"
    if (place / "go-build").is_dir():
        return place / "go-build"
    making = Path(tempfile.mkdtemp(prefix=f"{place.name}.", dir=place.parent))
    try:
        module = making / "module"
        module.mkdir()
        for name, text in WARM_MODULE.items():
            (module / name).write_text(text)
        env = {**os.environ, "GOCACHE": str(making / "go-build"), "GOFLAGS": "-v -modcacherw", "GOPROXY": "off",
               "GOWORK": "off", "GO111MODULE": "on"}
        subprocess.run([go, "test", "./..."], cwd=module, env=env, check=True, capture_output=True)
        shutil.rmtree(module)
        with contextlib.suppress(OSError):  # another worker made it first: theirs is the same
            making.rename(place)
    finally:
        shutil.rmtree(making, ignore_errors=True)
    return place / "go-build"


def seed_gate_cache(repo: Path, feature_id: str = "FEAT-001") -> None:
    """Put a copy of the warm cache where the gate's runs of `feature_id` in `repo` keep their Go build cache."""
    warm = warm_cache()
    if warm is None:
        return
    feature = repo / ".autobuild" / "worktrees" / feature_id
    target = Path(sandbox.for_worktree(feature / "_").env["GOCACHE"])
    shutil.copytree(warm, target)
