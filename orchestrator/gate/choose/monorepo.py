"""Monorepos: every package with its own tests (npm/pnpm/yarn workspaces, a `backend/` and a `frontend/`, nested
go.mod; a Cargo workspace is one package), what each depends on among them, and which of them a change touches:
the packages whose files changed and every package depending on them; a file outside every package (a lockfile,
root config, CI) touches them all."""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from dataclasses import replace
from pathlib import Path

import yaml

from orchestrator.facts import PackageGate
from orchestrator.gate.choose.candidates import GateChoice, candidates, read
from orchestrator.gate.prepare.environment import package_json, workspace_root

_SKIP = {"node_modules", "target", "dist", "build", "out", "vendor", "third_party", "third-party", "docs", "doc",
         "examples", "example", "samples", "tests", "test", "testing", "fixtures", "benches", "benchmarks", "bench",
         "fuzz", "scripts", "coverage", "site-packages", "__pycache__", "env", "venv", "typings", "types"}
_MANIFESTS = ("package.json", "pyproject.toml", "setup.py", "setup.cfg", "go.mod", "Cargo.toml", "Makefile",
              "makefile", "GNUmakefile", "tox.ini", "noxfile.py", "pytest.ini")
_CONTAINERS = {"packages", "apps", "services", "libs", "modules", "projects", "components", "crates", "plugins"}
# The root's own tests (not an aggregator over the packages, like `make test` or a workspace root's script).
_ROOT_OWN = re.compile(r"^(pytest configuration|Python tests in|Cargo\.toml|go\.mod)")
# The maintainers' one command for the whole repo.
_AGGREGATOR = re.compile(r"^(GNUmakefile|makefile|Makefile|tox|noxfile|pyproject\.toml \[tool\.tox\]"
                         r"|\.github|\.gitlab)")


def monorepo_gate(root: Path, root_found: list[GateChoice]) -> GateChoice | None:
    """The per-package gate of a repo with packages in subfolders; None for a repo that is one package. The
    top's own tests (a guess from its layout, a package.json script outside a workspace) make it a package too;
    a maintainers' command at the top (a Makefile test target, tox, nox, CI) stays the one gate, unless the top is
    a workspace root, whose script usually runs a part only."""
    packages = find_packages(root)
    if not packages:
        return None
    workspace = workspace_root(root)
    first = root_found[0] if root_found else None
    if first is not None and not workspace and _AGGREGATOR.match(first.source):
        others = tuple(f"`{c.command}` ({c.source})" for c in root_found[1:])
        apart = _go_modules_apart(root, first, packages)
        inside = tuple(f"`{p['command']}` in {p['path']}/ ({p['source']}; run by the top's command, not alone)"
                       for p in packages if p not in apart)
        if not apart:
            return replace(first, detected=True, also=others + inside)
        gated = [_package(root, ".", first), *apart]
        _link_dependencies(root, gated)
        listed = ", ".join(f"{p['path']} `{p['command']}`" for p in gated)
        return GateChoice(combined_command(gated), f"{len(gated)} package(s): {listed} (a nested Go module is not"
                          f" entered by `go test ./...` at the top)", detected=True, packages=tuple(gated),
                          also=others + inside)
    own = [c for c in root_found if _ROOT_OWN.match(c.source) or (not workspace and c.source.startswith("package"))]
    if own:
        packages.insert(0, _package(root, ".", own[0]))
        _link_dependencies(root, packages)
    elif len(packages) == 1 and root_found:
        return None
    listed = ", ".join(f"{p['path']} `{p['command']}`" for p in packages)
    also = tuple(f"`{c.command}` ({c.source}, at the top: not split per package)" for c in root_found
                 if not own or c is not own[0])
    return GateChoice(combined_command(packages), f"{len(packages)} package(s): {listed}", detected=True,
                      packages=tuple(packages), also=also)


def _go_modules_apart(root: Path, top: GateChoice, packages: list[PackageGate]) -> list[PackageGate]:
    """The nested Go modules the top's command doesn't reach: `go test ./...` stops at a folder with its own
    go.mod, so only a go.work naming the module, or the top's command naming its folder (`cd arc`, `-C arc`,
    `./arc/...`; for a make target, its Makefile), lets it test the module."""
    used = {line.strip().removeprefix("./").rstrip("/") for line in _use_block(read(root / "go.work")).splitlines()}
    # A CI step is all the gate runs of a workflow (another step's `working-directory: ./arc` doesn't run); a make
    # target runs its recipe, which the Makefile holds.
    where = str(top.command) if top.source.startswith((".github", ".gitlab", "tox")) else read(
        root / top.source.split()[0])
    return [p for p in packages if (root / p["path"] / "go.mod").is_file() and p["command"].startswith("go test")
            and p["path"] not in used and not re.search(rf"(?<![\w.-]){re.escape(p['path'])}(?![\w-])", where)]


def _use_block(gowork: str) -> str:
    """go.work's `use` directives, one folder a line (`use ./a` and `use ( ./a \n ./b )`)."""
    return "\n".join(re.findall(r"^use\s+(\S+)\s*$", gowork, re.MULTILINE)
                     + [line for block in re.findall(r"^use\s*\(([^)]*)\)", gowork, re.MULTILINE)
                        for line in block.splitlines()])


def combined_command(packages: list[PackageGate]) -> str:
    """One shell command running every package's gate in its folder, failing if any fails (for whatever needs a
    single command: an agent's brief, landing)."""
    parts = [f"(cd {shlex.quote(p['path'])} && {p['command']}) || rc=1" for p in packages]
    return "rc=0; " + "; ".join(parts) + "; exit $rc"


def _package(root: Path, path: str, choice: GateChoice) -> PackageGate:
    return PackageGate(path=path, command=str(choice.command), source=choice.source, depends_on=[], base=None)


def _submodules(root: Path) -> set[str]:
    return set(re.findall(r"^\s*path\s*=\s*(.+?)\s*$", read(root / ".gitmodules"), re.MULTILINE))


def _workspace_folders(root: Path) -> list[Path]:
    """Members of npm/yarn (`workspaces`) and pnpm (pnpm-workspace.yaml) workspaces."""
    spaces = package_json(root).get("workspaces")
    patterns = spaces.get("packages") if isinstance(spaces, dict) else spaces
    globs = [str(p) for p in patterns] if isinstance(patterns, list) else []
    try:
        pnpm = yaml.safe_load(read(root / "pnpm-workspace.yaml")) or {}
    except yaml.YAMLError:
        pnpm = {}
    if isinstance(pnpm, dict) and isinstance(pnpm.get("packages"), list):
        globs += [str(p) for p in pnpm["packages"]]
    folders: list[Path] = []
    for pattern in globs:
        if pattern.startswith("!") or ".." in pattern:
            continue
        folders += [f for f in root.glob(pattern.rstrip("/")) if (f / "package.json").is_file()]
    return folders


def _scanned_folders(root: Path) -> list[Path]:
    """Folders one level down (two under packages/, apps/, services/…) that hold a manifest."""
    def children(folder: Path) -> list[Path]:
        try:
            return sorted(f for f in folder.iterdir() if f.is_dir() and not f.name.startswith((".", "_"))
                          and f.name not in _SKIP)
        except OSError:
            return []

    found = []
    for child in children(root):
        if any((child / name).is_file() for name in _MANIFESTS):
            found.append(child)
        if child.name in _CONTAINERS or not any((child / name).is_file() for name in _MANIFESTS):
            found += [g for g in children(child) if any((g / name).is_file() for name in _MANIFESTS)]
    return found


def find_packages(root: Path) -> list[PackageGate]:
    """Every package below the top with its own test command, in path order, with what each depends on."""
    skip = _submodules(root)
    cargo_workspace = "[workspace]" in read(root / "Cargo.toml")
    packages: dict[str, PackageGate] = {}
    for folder in sorted({*_workspace_folders(root), *_scanned_folders(root)}):
        path = folder.relative_to(root).as_posix()
        if path in skip or any(part in _SKIP or part.startswith(".") for part in Path(path).parts):
            continue
        found = candidates(folder, root)
        if cargo_workspace:  # its members are tested by the workspace's one `cargo test`
            found = [c for c in found if not str(c.command).startswith("cargo ")]
        # A CI workflow inside a package folder is not run there; a package needs tests of its own.
        found = [c for c in found if not c.source.startswith((".github", ".gitlab"))]
        if (folder / "go.mod").is_file() and not has_go_tests(folder):  # tools, generated code: nothing to run
            found = [c for c in found if not str(c.command).startswith("go test")]
        if found:
            packages[path] = _package(root, path, found[0])
    listed = list(packages.values())
    _link_dependencies(root, listed)
    return listed


def has_go_tests(module: Path) -> bool:
    """Does the Go module in `module` have a test file of its own (`go test ./...` skips `testdata`, `vendor`,
    folders starting with `.` or `_`, and nested modules)?"""
    for folder, dirs, files in os.walk(module):
        if any(name.endswith("_test.go") for name in files):
            return True
        dirs[:] = [d for d in dirs if d not in ("testdata", "vendor") and not d.startswith((".", "_"))
                   and not os.path.isfile(os.path.join(folder, d, "go.mod"))]
    return False


def _names_and_needs(folder: Path) -> tuple[set[str], set[str]]:
    """The names a package is known by, and the names it depends on (normalised), from its manifests."""
    names: set[str] = set()
    needs: set[str] = set()
    package = package_json(folder)
    if isinstance(package.get("name"), str):
        names.add(_norm(str(package["name"])))
    for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        deps = package.get(key)
        needs |= {_norm(name) for name in deps} if isinstance(deps, dict) else set()
    try:
        pyproject = tomllib.loads(read(folder / "pyproject.toml"))
    except tomllib.TOMLDecodeError:
        pyproject = {}
    project = pyproject.get("project") or {}
    if project.get("name"):
        names.add(_norm(str(project["name"])))
    requirements = [*project.get("dependencies", []), *(d for group in (project.get("optional-dependencies") or {})
                                                          .values() for d in group)]
    needs |= {_norm(m.group(0)) for r in requirements if (m := re.match(r"[A-Za-z0-9._-]+", str(r)))}
    poetry = (pyproject.get("tool") or {}).get("poetry") or {}
    needs |= {_norm(name) for name in (poetry.get("dependencies") or {})}
    gomod = read(folder / "go.mod")
    if (module := re.search(r"^module\s+(\S+)", gomod, re.MULTILINE)) is not None:
        names.add(module.group(1))
    needs |= set(re.findall(r"^\s*(?:require\s+)?([\w.\-/]+\.[\w.\-/]+)\s+v\d", gomod, re.MULTILINE))
    return names, needs - names


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower() if "/" not in name or name.startswith("@") else name


def _link_dependencies(root: Path, packages: list[PackageGate]) -> None:
    known = {p["path"]: _names_and_needs(root / p["path"]) for p in packages}
    by_name = {name: path for path, (names, _) in known.items() for name in names}
    for package in packages:
        needs = known[package["path"]][1]
        package["depends_on"] = sorted({by_name[n] for n in needs if n in by_name} - {package["path"]})


def owner(packages: list[PackageGate], file: str) -> str | None:
    """The deepest package (other than the top) holding `file`; None: a file of the top (it touches them all)."""
    best: str | None = None
    for package in packages:
        path = package["path"]
        if path != "." and (file == path or file.startswith(path + "/")) and len(path) > len(best or ""):
            best = path
    return best


def affected(packages: list[PackageGate], changed: list[str] | None) -> list[str]:
    """The packages (paths, in gate order) a change to `changed` touches: owners of the changed files and
    every package depending on them, transitively; all of them for a file outside every package, or when the
    changed files are unknown (None). The top's own package owns nothing but is touched by top files."""
    every = [p["path"] for p in packages]
    if changed is None:
        return every
    owners = {owner(packages, file) for file in changed}
    if None in owners:
        return every
    hit = {o for o in owners if o is not None}
    grew = True
    while grew:
        more = {p["path"] for p in packages if set(p["depends_on"]) & hit} - hit
        grew, hit = bool(more), hit | more
    return [path for path in every if path in hit]
