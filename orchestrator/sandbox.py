"""The sandbox our own subprocesses (the gate, setup) run in: bubblewrap, everything read-only but what the run owns.

A task's worktree, its git admin folder, the shared object store, the gate's own folder (its environment, build
caches and private tmp) and the run's download caches are writable; the user's checkout, refs, HEAD, index,
`.git/config`, hooks, home and venv are not, nor the agents' environment. Network is shared (a gate may talk to
127.0.0.1; setup may fetch packages). `available()` says once per process whether bwrap runs here (it needs user
namespaces or root); without it commands run as before and the run says so.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from agents.bounded import read_text_bounded
from orchestrator import sandbox_tmp

SANDBOX_FOLDER = "_sandbox"
"""Per feature, beside its worktrees: the private tmp and the tool caches of the run."""
GATE_FOLDER = "_gate-own"
"""Per feature, beside its worktrees: the private tmp, the build and the download caches of the gate and setup,
which no agent can write (an agent's cargo config, a Go build cache entry, a jest transform, a module edited in
Go's module cache or a wheel in pip's cache, planted there, would steer the gate's run: Go checks go.sum only when
it downloads)."""
GATE_ENV = "env"
"""In GATE_FOLDER: the gate's own environment (its venv layered over the user's, setup's installs), which the gate,
setup and the hidden tests' runs import and no agent can write (a `.pth` line or a `sitecustomize.py` planted in
a venv the gate uses would run in every gate run)."""
ENV_FOLDER = "_env"
"""Per feature, beside its worktrees: the agents' environment (their venv layered over the gate's), written by
agents only and never imported by the gate."""
OWN_TMPDIR = "/tmp/.autobuild-tmp"
"""TMPDIR inside the sandbox: a folder of the private tmp that no host entry shadows (the host's /tmp entries are
shown read-only above the private tmp, and tools keep caches there by fixed names: jest's /tmp/jest_0)."""
REFUSED = "read-only file system"
"""What a write outside the writable paths fails with, inside bwrap (and in Claude Code's own sandbox); matched
case-blind, as shells and runtimes word it differently (bash, zsh, node's EROFS)."""
NOTE = "autobuild sandbox: refused writes outside the run's worktree: "
"""How run_shell names the refusals at the end of a sandboxed command's output."""


@dataclass(frozen=True)
class Sandbox:
    """Where a sandboxed command may write; `tmp` is bound at /tmp; `env` adds the caches' variables; `readable`
    are shown read-only again when they live under /tmp (a repo under /tmp stays visible above the private tmp)."""

    writable: tuple[Path, ...]
    tmp: Path
    env: Mapping[str, str] = field(default_factory=dict)
    readable: tuple[Path, ...] = ()
    masked: tuple[Path, ...] = ()
    """Files the command can't read (an empty file is shown in their place): the plan's hidden tests."""
    setup_only: tuple[Path, ...] = ()
    """Inside a writable path, writable by setup only: `for_run()` shows them read-only."""
    read_only: tuple[Path, ...] = ()
    """Shown read-only over the writable paths (made first, so a run can't make them either)."""
    protected: tuple[Path, ...] = ()
    """Files shown read-only in place (a gate run's tracked test files): nothing the run starts can rewrite,
    replace or remove them, even to put them back before it ends."""

    def with_writable(self, *paths: Path) -> Sandbox:
        return replace(self, writable=(*self.writable, *paths))

    def with_masked(self, *paths: Path) -> Sandbox:
        return replace(self, masked=(*self.masked, *paths))

    def protecting(self, files: Sequence[Path]) -> Sandbox:
        return replace(self, protected=(*self.protected, *files))

    def for_run(self) -> Sandbox:
        """The sandbox of a gate run: the gate's environment read-only (setup's installs), so the code under test
        can't plant there what every later run would import (a `.pth` line, a `sitecustomize.py`)."""
        return replace(self, read_only=(*self.read_only, *self.setup_only))


def bwrap() -> str | None:
    """The bubblewrap binary on PATH when it can actually start a sandbox here (user namespaces, mounts)."""
    binary = shutil.which("bwrap")
    return binary if binary is not None and _works(binary) else None


@functools.cache
def _works(binary: str) -> bool:
    """Probed once per binary and process."""
    try:
        probe = subprocess.run([binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"],
                               capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def available() -> bool:
    return bwrap() is not None


def why_unavailable() -> str:
    """One line for `doctor` and the run's start."""
    if shutil.which("bwrap") is None or shutil.which("socat") is None:
        return ("bubblewrap (bwrap) or socat is not installed: the gate, setup and agents' commands can write what you"
                " own; install them (Debian/Ubuntu: apt-get install bubblewrap socat)")
    return ("bubblewrap can't start a sandbox here (no user namespaces?): the gate, setup and agents' commands"
            " can write what you own")


def _git_paths(worktree: Path) -> list[Path]:
    """The worktree's own git admin folder and the shared object store (commits the gate or setup make)."""
    dot_git = worktree / ".git"
    if not dot_git.is_file():
        return []
    try:
        text = read_text_bounded(dot_git).strip()
    except OSError:
        return []
    if not text.startswith("gitdir:"):
        return []
    admin = (worktree / text.removeprefix("gitdir:").strip()).resolve()
    common_file = admin / "commondir"
    try:
        common = (admin / read_text_bounded(common_file).strip()).resolve() if common_file.is_file() else admin
    except OSError:
        common = admin
    return [admin, common / "objects"]


def _caches(private: Path) -> dict[str, str]:
    """Tool caches owned by the run: what would otherwise go to the user's home."""
    cache = private / "cache"
    cargo_home = private / "cargo"
    return {
        "XDG_CACHE_HOME": str(cache),
        "PIP_CACHE_DIR": str(cache / "pip"),
        "npm_config_cache": str(cache / "npm"),
        "YARN_CACHE_FOLDER": str(cache / "yarn"),
        "PNPM_HOME": str(cache / "pnpm"),
        # pnpm's switch to the version a `packageManager` field names installs it by `pnpm add` in a folder under
        # PNPM_HOME: inside the checkout, that finds the repo's pnpm-workspace.yaml and its `packageManager` again
        # and recurses without end, offline (measured: 57 nested pnpm in 45 s). Set, even empty, COREPACK_ROOT tells
        # pnpm (9 and 10, and the scripts it runs) that Corepack chose it: the pnpm on PATH runs the scripts.
        "COREPACK_ROOT": "",
        "GOCACHE": str(cache / "go-build"),
        "GOMODCACHE": str(cache / "go-mod"),
        "CARGO_HOME": str(cargo_home),
        "TMPDIR": OWN_TMPDIR,
        # A `prepare` script such as husky's would write core.hooksPath into the shared .git/config.
        "HUSKY": "0",
    }


# Measured: in the run's venv layered over the user's, `pip install -e .` first uninstalls the user's editable
# install it sees through the layer (a write into the user's venv, refused by the sandbox); installing without
# uninstalling puts the new one in the run's venv only, ahead of the user's.
_LAYERED_PIP = {"PIP_IGNORE_INSTALLED": "1"}


def agent_env(worktree: Path) -> dict[str, str]:
    """The tool caches of an agent's sandboxed Bash (its home is read-only there: npm, pip and go would fail or
    run uncached); a layered CARGO_HOME needs bind mounts, so cargo keeps the user's, read-only. Their caches are
    theirs only: Go fetches what setup downloaded from the gate's module cache (`_gate_modules`), verified."""
    private = worktree.parent / SANDBOX_FOLDER
    env = {key: value for key, value in _caches(private).items() if key not in ("CARGO_HOME", "TMPDIR")}
    env["GOPROXY"] = _gate_modules(worktree.parent / GATE_FOLDER)
    # Go's module cache is read-only by default: `clean` could not remove the run's.
    run_venv = worktree.parent / ENV_FOLDER / "venv"
    if (run_venv / "pyvenv.cfg").is_file():  # an agent's bare `pip` installs into the run's venv, not the user's
        env.update(_LAYERED_PIP, PIP_PREFIX=str(run_venv))
    return env | {"GOFLAGS": f"{os.environ.get('GOFLAGS', '')} -modcacherw".strip()}


def _gate_modules(own: Path) -> str:
    """GOPROXY for the agents: the gate's module downloads first (a proxy folder Go reads and checks against
    go.sum and the checksum database as any download: an agent's test run needs what setup fetched, without
    the network), then the user's proxy (Go's default without one)."""
    downloads = Path(_caches(own)["GOMODCACHE"]) / "cache" / "download"
    return f"file://{downloads},{os.environ.get('GOPROXY') or 'https://proxy.golang.org,direct'}"


def for_worktree(worktree: Path, extra: Sequence[Path] = ()) -> Sandbox:
    """The sandbox of commands run in one of the run's worktrees (`.autobuild/worktrees/<FEATURE>/<NAME>`): the
    gate's and setup's, with a tmp, build and download caches of their own, out of the agents' reach."""
    feature_dir = worktree.parent
    own = feature_dir / GATE_FOLDER
    root = feature_dir.parent.parent.parent  # <root>/.autobuild/worktrees/<FEATURE>
    gate_env = own / GATE_ENV
    env = _caches(own)
    if not (gate_env / "venv" / "pyvenv.cfg").is_file():
        # No gate venv layered over the user's: pip installs (setup's, a test's) go to the gate's own folder,
        # never into the user's read-only venv.
        env["PIP_TARGET"] = str(gate_env / "site-packages")
    else:
        # The layered venv has no pip of its own: a bare `pip` is the user's, which installs into the user's
        # venv; the prefix sends it to the gate's.
        env.update(_LAYERED_PIP, PIP_PREFIX=str(gate_env / "venv"))
    # Not the agents' environment nor caches (ENV_FOLDER, SANDBOX_FOLDER): nothing the gate or setup needs lives
    # there, and the code under test has nothing to leave the agents.
    return Sandbox((worktree, *_git_paths(worktree), own, *extra), own / "tmp", env, (root,),
                   setup_only=(gate_env,))


def for_hidden(place: Path, private: Path) -> Sandbox:
    """The sandbox of a gate run with hidden tests in place (gate/spec/hidden.py): only the throwaway tree and a
    private folder beside it are writable (never the object store, the run's tmp, caches or environment, which
    the agents can read), so the code under test can't leave a copy of a hidden file where an agent finds it."""
    gate_env = place.parent.parent / GATE_FOLDER / GATE_ENV
    env = _caches(private) | ({"PIP_TARGET": str(private / "site-packages")}
                              if not (gate_env / "venv" / "pyvenv.cfg").is_file() else {})
    root = place.parent.parent.parent.parent.parent  # <root>/.autobuild/worktrees/<FEATURE>/_hidden/<NAME>
    return Sandbox((place, private), private / "tmp", env, (root,))


def _cargo_layers(cargo_home: Path) -> list[str]:
    """The user's ~/.cargo registry, git checkouts and config, read-only inside the run's own CARGO_HOME."""
    user = Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")
    binds: list[str] = []
    for name in ("registry", "git", "config.toml", "config", "bin"):
        source = user / name
        if source.exists() and source.resolve() != (cargo_home / name).resolve():
            target = cargo_home / name
            if source.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            elif not target.exists():
                target.touch()
            binds += ["--ro-bind", str(source), str(target)]
    return binds


def wrap(args: Sequence[str], cwd: Path, sandbox: Sandbox, env: Mapping[str, str] | None = None) -> list[str]:
    """`args` run under bwrap in `cwd` (the caller checked `available()`) with `env` (ours by default): read-only
    root, the writable paths bound onto themselves (created first), the private tmp at /tmp. Same process group,
    so killpg reaches it."""
    binary = bwrap()
    assert binary is not None, "wrap() needs available()"
    (sandbox.tmp / Path(OWN_TMPDIR).name).mkdir(parents=True, exist_ok=True)
    command = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", str(sandbox.tmp), "/tmp"]
    # What the command needs of the host's /tmp stays visible, read-only, above the private tmp: a repo, its venv,
    # or AutoBuild's own checkout and venv there (a clone under /tmp ran its gate with no python otherwise); only
    # those, as every mount makes the sandbox slower to start (sandbox_tmp.py).
    hidden = (Path(OWN_TMPDIR), *sandbox.writable)
    for path in sandbox_tmp.shown(cwd, sandbox.readable, os.environ if env is None else env, args, hidden):
        command += ["--ro-bind-try", str(path), str(path)]
    for path in dict.fromkeys(sandbox.writable):
        path.mkdir(parents=True, exist_ok=True)
        command += ["--bind", str(path.resolve()), str(path.resolve())]
    for path in dict.fromkeys(sandbox.read_only):  # after the writable binds: mounted over them
        path.mkdir(parents=True, exist_ok=True)
        command += ["--ro-bind", str(path.resolve()), str(path.resolve())]
    for path in dict.fromkeys(sandbox.protected):  # after the writable binds; a link is never followed out
        if path.is_file() and not path.is_symlink():
            command += ["--ro-bind", str(path), str(path)]
    if cargo := sandbox.env.get("CARGO_HOME"):
        command += _cargo_layers(Path(cargo))
    for path in dict.fromkeys(sandbox.masked):
        if path.is_file():
            command += ["--ro-bind", "/dev/null", str(path.resolve())]
    return [*command, "--die-with-parent", "--chdir", str(cwd), "--", *args]


_SETUP_FAILED_ON_TMP = re.compile(r"^bwrap: Can't .*?/(?:old|new)root(/tmp/[^/\s:]+)")


def lost_tmp_entry(returncode: int, stdout: str, stderr: str) -> str | None:
    """The top-level /tmp entry bwrap failed to bind before the command started, when it is gone since `wrap`
    listed /tmp (another process's socket or folder removed meanwhile: bwrap checks a source, then mounts it, and
    a removal in between fails the whole sandbox); wrapping again lists /tmp anew. None for anything else."""
    if returncode != 1 or stdout.strip() or not stderr.startswith("bwrap: "):
        return None
    found = _SETUP_FAILED_ON_TMP.match(stderr)
    return found.group(1) if found and not os.path.lexists(found.group(1)) else None


def refusals(output: str, limit: int = 5) -> list[str]:
    """The lines of a command's output where the sandbox refused a write, each once (a gate's output may show a
    line twice: among a failing test's lines and among the last ones)."""
    return list(dict.fromkeys(line.strip() for line in output.splitlines()
                              if REFUSED in line.lower() and not line.startswith(NOTE)))[:limit]


def agents_available() -> bool:
    """Claude Code's own Bash sandbox needs bubblewrap and socat (its network proxy) on Linux."""
    return available() and shutil.which("socat") is not None
