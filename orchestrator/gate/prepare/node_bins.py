"""The main checkout's `node_modules/.bin` folders on a worktree's PATH: npm's script runner walks up from the
package to every ancestor's `node_modules/.bin` (a worktree inside the repo reaches the user's), but yarn v1's and
pnpm's look only in the package's own (and the workspace root's), which a worktree has none of, so `yarn test`
said `jest: not found`. Read-only: nothing is installed, nothing of the user's written, no network."""

from __future__ import annotations

from pathlib import Path

MAIN_CHECKOUT_BINS = "the main checkout's node_modules, read-only (its node_modules/.bin on the commands' PATH)"
"""What `validate` says a worktree takes from the main checkout in place of a setup."""


def main_checkout_bins(root: Path, worktree: Path, package: str = ".") -> list[str]:
    """The main checkout's `node_modules/.bin` folders a command in `worktree`'s `package` folder would have found
    had it run in the main checkout, nearest first (the package's own, then each folder up to the repo's): none for
    the main checkout itself, whose runners find them on their own."""
    try:
        if worktree.resolve() == root.resolve():
            return []
    except (OSError, RuntimeError):
        return []
    inside = Path(package)
    folders = [root / inside, *(root / parent for parent in inside.parents)]
    return [str(folder / "node_modules" / ".bin") for folder in dict.fromkeys(folders)
            if (folder / "node_modules" / ".bin").is_dir()]


def reuses_node_modules(root: Path) -> bool:
    """Does a worktree take its JavaScript dependencies from the main checkout (it has `node_modules/.bin`)?"""
    return (root / "node_modules" / ".bin").is_dir()
