"""The tree and environment a gate command runs in: the repo's own environment redirected to each worktree, a fresh tree
of what is committed, and the clean room of the base's test side.

environment.py: the repo's own environment for the gate, setup and the agents' test runs.
pyenv.py: where the repo's Python environment reaches into the main checkout.
node_modules.py: a worktree's own `node_modules`, workspace packages linked to its code.
node_bins.py: the main checkout's `node_modules/.bin` on a worktree's PATH (yarn's and pnpm's runners need it).
generated.py: the version file an install generated, copied into worktrees when the build config names it.
submodules.py: submodules in a run's worktrees, and a task's changes inside one found and undone.
fresh_tree.py: what agents left in a worktree outside git is removed before a gate run there.
shared_setup.py: a task's attempts share one setup: a sibling's products copied unless tied to its path or changed.
checkout.py: a worktree's tracked files put back to its commit's, whatever its index (the agents') says.
clean_room.py: the task's code with the base's test side, where the base's tests give their verdict.
support.py: base test support among the code (a helper only tests import), on the test side by its role.
sides.py: which side of the product a file is on: code, test side, or a manifest split key by key.
manifests.py: mixed manifests split key by key: the base's with the task's code-side keys.
gomod.py: go.mod in the clean room: the task's requirements with the base's `replace` directives.
"""
