"""The gate's one entry point: which command gates, its run on the base, and its runs on a tree.

Every caller (the task graph's turns and merge queue, `land`, the planner's check) builds one `GateRequest` and
asks a `Gates`: `check_base` decides the command and runs it on the base (raising GateUnusableError when it
can't gate), `set_up` prepares a new worktree, `run` gates a tree and says whether anything actually ran.
Runs are remembered by tree in the repository's cache (gate/cache.py), a new failure is run again once before
it counts (flaky tests), every command runs sandboxed, and the caller's `watch` wraps each command that runs
(the user-state watch).
"""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TypeVar

from orchestrator import sandbox
from orchestrator.facts import Acceptance, GateResult, GateSetup, PackageGate
from orchestrator.gate import verdict
from orchestrator.gate.baseline import check_gate, choose_setup
from orchestrator.gate.cache import GateCache, cache_key, env_digest, gated_tree, worktree_tree
from orchestrator.gate.choose import base_command
from orchestrator.gate.choose.detect import GateChoice, choose_gate
from orchestrator.gate.observe.judge import gathered_run, settled, unusable_base
from orchestrator.gate.observe.per_package import changed_since as changed_files
from orchestrator.gate.observe.per_package import gate_packages, run_package
from orchestrator.gate.observe.result import failing_on, run_gate
from orchestrator.gate.prepare import clean_room, fresh_tree
from orchestrator.gate.prepare.environment import gate_env
from orchestrator.gate.prepare.generated import copy_generated
from orchestrator.gate.prepare.node_modules import own_node_modules
from orchestrator.gate.prepare.shared_setup import copy_products
from orchestrator.gate.prepare.submodules import init_submodules
from orchestrator.gate.prepare.submodules import submodules as declared_submodules
from orchestrator.gate.spec import cross_tests, hidden
from orchestrator.gate.spec.no_baseline import no_baseline
from orchestrator.gate.spec.spec_check import SpecCheck, read_texts
from orchestrator.gate.verdict import no_gate
from orchestrator.processes import Completed, full_priority, run_shell
from orchestrator.repo import confined
from orchestrator.repo.git import GitRepo

T = TypeVar("T")


class Watch(Protocol):
    """Wraps each command the gate runs: `running` is awaited inside, `output` reads what it printed."""

    async def __call__(self, what: str, worktree: Path, running: Awaitable[T], output: Callable[[T], str]) -> T: ...


@dataclass(frozen=True)
class GateRequest:
    """What decides a run's gate and how its runs go: the fields every caller shares."""

    plan_verify: str | None = None
    """The plan's `verify`."""
    plan_setup: str | None = None
    """The plan's `setup`."""
    verify: str | None = None
    """`--verify` (`none`: no gate)."""
    setup: str | None = None
    """`--setup` (`none`: no setup)."""
    timeout_s: float = 600.0
    """Seconds the setup and each gate run may take."""
    judge_by_counts: bool = False
    """`--judge-by-counts`: a red base whose failures are not named judges tasks by their number."""
    repairs_base: bool = False
    """A task repairs a base whose tests never ran (`repairs_base`, `--repair-base`): not refused, and no failure
    is waived as already failing on it."""


@dataclass(frozen=True)
class GateRun:
    """One gate verdict and whether a command ran for it (False: remembered from an earlier run of the tree)."""

    result: GateResult
    ran: bool


@dataclass
class Gates:
    """The gate of one repository: decided once (`decided`, from `check_base` or a checkpoint), then run on trees."""

    repo: GitRepo
    request: GateRequest
    decided: GateSetup | None = None
    """The run's gate and its base run (None until `check_base`)."""
    cache: GateCache | None = None
    """Runs remembered by tree: the repository's cache unless given (None given: `no_cache`)."""
    watch: Watch | None = None
    env_extra: Mapping[str, str] = field(default_factory=dict)
    """Variables added to every command's environment, outside the cache key (a process tag)."""
    launcher: Callable[[str], str] | None = None
    """Wraps each command line before it runs (land's leash); results name the command as given."""
    no_cache: bool = False
    hidden: hidden.HiddenTests | None = None
    """The plan's hidden acceptance tests: no other run can read them, `run(hidden=...)` puts some in place."""
    spec: SpecCheck = field(init=False)
    """What became of every base test in a judged tree (gate/spec/spec_check.py)."""

    def __post_init__(self) -> None:
        if self.cache is None and not self.no_cache:
            self.cache = GateCache.for_repo(self.repo.root)
        self.spec = SpecCheck(self.repo, lambda sha, command, near: self.tree_run(sha, command, near=near),
                              lambda command, place, extra: self._run_once(command, place, extra=extra), self.set_up,
                              self._run_package_once)

    @property
    def setup(self) -> GateSetup:
        if self.decided is None:
            raise RuntimeError("the gate is not decided yet: call check_base first")
        return self.decided

    async def decide(self) -> GateChoice:
        """The command that gates: `--verify`, else the plan's, else the repo's own (read off the loop)."""
        request = self.request
        return await asyncio.to_thread(choose_gate, self.repo.root, request.plan_verify, request.verify)

    async def check_base(self, feature_id: str, base_sha: str) -> GateSetup:
        """Decide the gate and run it once on `base_sha` (reused when this base tree was gated with the same
        command, setup and environment, by any feature: its summary then says so; a red base once both runs of its
        check failed alike); GateUnusableError when the command can't gate."""
        request, choice = self.request, await self.decide()
        key = await self.base_key(feature_id, base_sha, choice)
        if key is None or self.cache is None:  # a monorepo's base runs are per package: not cached (yet)
            self.decided = await self._check(feature_id, base_sha, choice)
            return self.decided
        setup_command = await asyncio.to_thread(choose_setup, self.repo.root, request.plan_setup, request.setup)
        found = await asyncio.to_thread(self.cache.lookup, key)
        if found is not None and unusable_base(found, detected=choice.detected, judge_by_counts=request.judge_by_counts
                                               ) is None and not (found.get("not_a_baseline") or no_baseline(found)):
            self.cache.reused += 1
            base = found.copy()
            base["summary"] = f"{found['summary']} (reused: this base tree was gated by an earlier run)"
            self.decided = GateSetup(command=choice.command, source=choice.source, setup=setup_command, base=base,
                                     base_sha=base_sha)
            return self.decided
        cache = self.cache  # the second run, when it failed, then the base's: a failure both runs show is seen
        # twice, so the next feature, resume or `land` on this base reuses it as it would a pass
        self.decided = await self._check(feature_id, base_sha, choice, lambda again: cache.store(key, again))
        if self.decided["base"] is not None:
            cache.runs += 1
            await cache.store(key, self.decided["base"])
        return self.decided

    async def base_key(self, feature_id: str, base_sha: str, choice: GateChoice | None = None) -> str | None:
        """The cache key `check_base` files the base's run under (None: not remembered: no command, a monorepo)."""
        choice = choice or await self.decide()
        if choice.command is None or choice.packages or self.cache is None:
            return None
        setup_command = await asyncio.to_thread(choose_setup, self.repo.root, self.request.plan_setup,
                                                self.request.setup)
        worktree = self.repo.worktrees_dir / feature_id / "_baseline"
        return cache_key(await gated_tree(self.repo, base_sha), choice.command, setup_command,
                         await self._env_digest(worktree))

    async def _check(self, feature_id: str, base_sha: str, choice: GateChoice,
                     failed_again: Callable[[GateResult], Awaitable[None]] | None = None) -> GateSetup:
        request = self.request
        decided = await check_gate(self.repo, feature_id, base_sha, plan_verify=request.plan_verify,
                                   plan_setup=request.plan_setup, verify=request.verify, setup=request.setup,
                                   timeout_s=request.timeout_s, judge_by_counts=request.judge_by_counts,
                                   choice=choice, repairs_base=request.repairs_base, failed_again=failed_again)
        decided["base_sha"] = base_sha
        return decided

    async def share_setup(self, worktree: Path, like: Path) -> bool:
        """Make a new worktree ready as `set_up` would from `like`, a sibling at the same commit that setup made
        ready: its setup products copied (gate/prepare/shared_setup.py). False (nothing done) when they can't be
        shared, or there is no setup command to save."""
        if not self.setup["setup"] or bool(await asyncio.to_thread(declared_submodules, self.repo.root)):
            return False  # nothing to save; or what setup made inside a submodule, which its record doesn't list
        if await copy_products(self.repo, like, worktree) is None:
            return False
        await fresh_tree.record(self.repo, worktree, "setup")
        return True

    async def set_up(self, worktree: Path, *, submodules: bool = True) -> Completed | None:
        """Make a new worktree able to run the repo's tests: its submodules from the main checkout's copies, then
        its own node_modules (gate/prepare/node_modules.py) and the version file the build configuration names
        (gate/prepare/generated.py), then the run's setup command (watched); its run, None without
        one."""
        if submodules:
            await init_submodules(self.repo, worktree)
        await own_node_modules(self.repo, worktree)
        await copy_generated(self.repo, worktree)
        command, done = self.setup["setup"], None
        if command:
            env, box = await asyncio.to_thread(self._environment, worktree)
            done = await self._watched(f"setup `{command}`", worktree, run_shell(
                self._launch(command), worktree, self.request.timeout_s, env, box),
                lambda done: done.stdout + "\n" + done.stderr)
        await fresh_tree.record(self.repo, worktree, "setup")  # what setup made stays for every gate run
        return done

    async def run(self, worktree: Path, command: str | None = None, *, changed_since: str | None = None,
                  base: GateResult | None = None, against: str | None = None,
                  accepted: Sequence[Acceptance] = (), hidden_tests: Sequence[str] = (),
                  kind: str | None = None) -> GateRun:
        """`_run` on what is committed in `worktree`: what the agents left there outside git is removed first, and
        setup run again if they changed what it made (gate/prepare/fresh_tree.py); what this run leaves is recorded as
        the gate's."""
        _, changed_setup = await fresh_tree.clean(self.repo, worktree)
        if changed_setup:  # what setup made was changed by the agents: made again (a failure fails the gate's run)
            await self.set_up(worktree)
        try:
            return await self._run(worktree, command, changed_since=changed_since, base=base, against=against,
                                   accepted=accepted, hidden_tests=hidden_tests, kind=kind)
        finally:
            await fresh_tree.record(self.repo, worktree, "gate")

    async def _run(self, worktree: Path, command: str | None = None, *, changed_since: str | None = None,
                   base: GateResult | None = None, against: str | None = None,
                   accepted: Sequence[Acceptance] = (), hidden_tests: Sequence[str] = (),
                   kind: str | None = None) -> GateRun:
        """The gate in `worktree` (`command`, else the run's), judged against the base's run of it (`base`, else
        the run's); `no_gate` when nothing can check the work. A tree already gated with the same command,
        setup and environment is not gated again. A monorepo's gate runs the packages the commits since
        `changed_since` touched (all of them without it). With `against` (a commit), every test that passed
        on that commit's tree must pass here, or be a change the coach `accepted` (gate/spec/accounting.py). With
        `hidden_tests`, they run in a tree of the gate's own (gate/spec/hidden.py), redacted from the result. With the
        task's `kind` (and `against`), its new tests are run on the base's code too (gate/spec/new_tests.py)."""
        decided = self.setup
        command = command or decided["command"]
        if command is None:
            return GateRun(no_gate(decided["source"]), ran=False)
        if decided.get("packages") and command == decided["command"]:
            return await self._run_packages(worktree, command, changed_since=changed_since, against=against,
                                            accepted=accepted, hidden_tests=hidden_tests, kind=kind)
        base = base if base is not None else decided["base"]
        ran = False

        async def once() -> GateResult:
            nonlocal ran
            ran = True
            with full_priority():  # behind the cache's lock on this tree: a sibling attempt's may wait for it
                return await self._run_once(command, worktree, known_failing=failing_on(base))

        key = await self._key(worktree, command)
        cache = self.cache
        remembered = once if cache is None else lambda: cache.run(key, once, settled=lambda run: settled(run, base))
        # Through the cache: a pass is reused at once, as is a failure all the base's (`settled`: the merge queue's
        # run of the tree the coach's turn gated on a red base); a new failure runs again (judged_run's flaky
        # re-run), and the second sighting is what the cache may keep.
        evidence = await gathered_run(command, worktree, self.request.timeout_s, {}, base, run=remembered)
        judged = verdict.judged_run(evidence)
        if against is not None and judged["exit_code"] is not None:
            run_base = self.setup["base"]
            unstable = (run_base.get("unstable") or []) if run_base else []
            evidence = replace(evidence, accepted=tuple(accepted), accounted=await self.spec.account(
                worktree, command, judged, against, accepted, unstable=unstable))
            if kind is not None and evidence.accounted is not None:
                evidence = await self._with_new_tests(evidence, worktree, command, against, kind)
        secrets: frozenset[str] = frozenset()
        if hidden_tests and judged["exit_code"] is not None:
            found, secrets, hidden_ran = await self._hidden_evidence(worktree, command, hidden_tests, against=against)
            evidence, ran = replace(evidence, hidden=found), ran or hidden_ran
        result = await self._counted(verdict.record(evidence), worktree, against, kind)
        for base_only in ("passing", "reads"):  # kept in the cache and the base's run, not in every turn's state
            result.pop(base_only, None)  # type: ignore[misc]  # NotRequired keys, named by a variable
        return GateRun(hidden.redact_result(result, secrets), ran=ran)

    async def _run_packages(self, worktree: Path, command: str, *, changed_since: str | None, against: str | None,
                            accepted: Sequence[Acceptance], hidden_tests: Sequence[str], kind: str | None) -> GateRun:
        """A monorepo's gate: the packages the commits since `changed_since` touched, each judged on its own."""
        decided = self.setup
        what = f"the gate `{command}`"
        changed = await changed_files(self.repo, worktree, changed_since) if changed_since else None
        each: list[tuple[PackageGate, GateResult]] = []
        evidence = await self._watched(what, worktree, gate_packages(
            decided, self.repo.root, worktree, changed, self.request.timeout_s, each=each, run=self._package_run),
            lambda run: run.run["output"])
        if against is not None and against == decided.get("base_sha"):  # the packages' base runs are its
            evidence = replace(evidence, accepted=tuple(accepted), accounted=await self.spec.account_packages(
                worktree, command, against, runs=each, accepted=accepted))
            if kind is not None and verdict.decide(evidence).passed:  # the new-tests rule, package by package
                evidence = replace(evidence, new_tests=await self.spec.new_tests_in_packages(
                    worktree, command, against, kind, runs=each))
        hidden_lines: frozenset[str] = frozenset()
        if hidden_tests and evidence.run["exit_code"] is not None:  # a monorepo's hidden tests run from the top
            found, hidden_lines, _ = await self._hidden_evidence(worktree, command, hidden_tests, against=against)
            evidence = replace(evidence, hidden=found)
        counted = await self._counted(verdict.record(evidence), worktree, against, kind)
        return GateRun(hidden.redact_result(counted, hidden_lines), ran=True)

    async def _counted(self, result: GateResult, worktree: Path, against: str | None, kind: str | None
                       ) -> GateResult:
        """The record with how many of the task's new tests failed on the base's code, when they ran there."""
        if kind is not None and against is not None and (
                failing := await self.spec.failing_on_base(worktree, against, kind)) is not None:
            result["new_tests_failing_on_base"] = failing
        return result

    async def _with_new_tests(self, evidence: verdict.Evidence, worktree: Path, command: str, against: str,
                              kind: str) -> verdict.Evidence:
        """The evidence with what the task's new tests show on the base's code, asked only while it passes."""
        if not verdict.decide(evidence).passed:
            return evidence
        judged = verdict.judged_run(evidence)
        return replace(evidence, new_tests=await self.spec.new_tests(worktree, command, judged, against, kind))

    async def _hidden_evidence(self, worktree: Path, command: str, paths: Sequence[str], *,
                               against: str | None = None) -> tuple[verdict.HiddenRun, frozenset[str], bool]:
        """The hidden tests' run (redacted), the lines to redact from the verdict, and whether they ran; with
        `against`, they run in the clean room (gate/prepare/clean_room.py). Their run is remembered as the main one is,
        by the commit's tree, the command, setup and environment, and by the hidden files' content (the cache keeps
        only its redacted copy) and the clean room's base: the same tree judged again runs nothing."""
        if self.hidden is None:
            raise RuntimeError("hidden tests asked for, but the gate was given none")
        contents, masked = await asyncio.to_thread(self.hidden.read, paths), self.hidden.sources()
        secrets = hidden.secret_lines(contents.values())
        sha = await self.repo.head(worktree)
        room = await clean_room.plan(self.repo, worktree, against, command) if against else clean_room.Room()
        cache, key = self.cache, ""
        if cache is not None:
            clean = "" if room.empty or against is None else f"\0{await gated_tree(self.repo, against)}"
            key = cache_key(await gated_tree(self.repo, sha), f"{command}\0{hidden.digest(contents)}{clean}",
                            self.setup["setup"], await self._env_digest(worktree))
            if (found := await asyncio.to_thread(cache.lookup, key)) is not None:
                cache.reused += 1
                return verdict.HiddenRun(tuple(paths), run=found), secrets, False
        run = await self._hidden_run(worktree, sha, command, contents, secrets=secrets, masked=masked,
                                     clean=(against, room) if against and not room.empty else None)
        if isinstance(run, str):  # the task's tree can't hold them: a verdict of the tree, not a run to remember
            return verdict.HiddenRun(tuple(paths), refused=run), secrets, True
        if cache is not None:
            cache.runs += 1
            await cache.store(key, run)
        return verdict.HiddenRun(tuple(paths), run=run), secrets, True

    async def _hidden_run(self, worktree: Path, sha: str, command: str, contents: Mapping[str, bytes], *,
                          secrets: frozenset[str], masked: Sequence[Path],
                          clean: tuple[str, clean_room.Room] | None = None) -> GateResult | str:
        """The hidden tests' run, redacted: on `sha` in a detached tree under `<feature>/_hidden/` (the clean room
        of `clean`: against, room), its setup done before they are put in place, in a sandbox that writes only that
        tree and a private folder beside it (both removed after); why not, when they can't be put in place."""
        paths = list(contents)
        folder = worktree.parent / hidden.FOLDER
        # Not named as the worktree: the run's environment keeps per-name files (an editable install's redirect).
        place, private = folder / f"hidden-{worktree.name}", folder / f"hidden-{worktree.name}.private"
        await self.repo.add_detached_worktree(place, sha)
        try:
            if clean is not None:  # the task's test side can't steer the acceptance tests either
                await clean_room.furnish(self.repo, place, *clean)
            await self.set_up(place)  # nothing hidden is in the tree yet
            if refused := await asyncio.to_thread(hidden.place, place, contents):
                return refused
            env, _ = await asyncio.to_thread(self._environment, place)
            box = sandbox.for_hidden(place, private).with_masked(*masked)
            if all(path.endswith(".py") for path in paths):  # pytest collects them whatever the command names
                env["PYTEST_ADDOPTS"] = " ".join([env.get("PYTEST_ADDOPTS", ""), *paths]).strip()
            run = await self._watched(f"the gate `{command}` with the hidden acceptance tests", place, run_gate(
                self._launch(command), place, self.request.timeout_s, env, box),
                lambda done: hidden.redact(done["output"], secrets))
        finally:
            await self.repo.remove_worktree(place)
            await asyncio.to_thread(shutil.rmtree, private, True)
        return hidden.redact_result(run, secrets)

    async def cross_test(self, near: Path, command: str | None = None, *, base: str, tests_from: str,
                         code_from: str) -> cross_tests.CrossRun:
        """`tests_from`'s new tests on `code_from`'s code (gate/spec/cross_tests.py), with `command` (else the run's;
        a monorepo's gate per package), judged against the base's known failures."""
        decided = self.setup
        command = command or decided["command"]
        if command is None:
            return cross_tests.CrossRun(cross_tests.NOT_RUN, detail="no gate command to run them with")
        if (packages := decided.get("packages")) and command == decided["command"]:
            return await cross_tests.cross_run_packages(
                self.repo, near, base=base, tests_from=tests_from, code_from=code_from, packages=packages,
                run_in=self._run_package_once, set_up=self.set_up)
        known = failing_on(decided["base"]) if command == decided["command"] else []
        return await cross_tests.cross_run(
            self.repo, near, base=base, tests_from=tests_from, code_from=code_from, set_up=self.set_up, known=known,
            run_in=lambda place, extra: self._run_once(command, place, extra=extra))

    async def tree_run(self, sha: str, command: str, *, near: Path) -> GateResult | None:
        """`command`'s run on `sha`'s tree: the run's base when it is that commit, else remembered by tree, else
        run now in a throwaway worktree beside `near` (None when that can't be set up)."""
        decided = self.setup
        if sha == decided.get("base_sha") and command == decided["command"] and decided["base"] is not None:
            return decided["base"]
        if self.cache is not None:
            key = cache_key(await gated_tree(self.repo, sha), command, decided["setup"], await self._env_digest(near))
            found = await asyncio.to_thread(lambda: self.cache.lookup(key, any_run=True) if self.cache else None)
            if found is not None:
                return found
        # A place of its own: two tasks judged against the same commit at once must not remove each other's.
        place = near.parent / f"_base-{sha[:12]}-{uuid.uuid4().hex[:8]}"
        await self.repo.add_detached_worktree(place, sha)
        try:
            done = await self.set_up(place)
            if done is not None and not done.ok:
                return None
            return (await self.observe(place, command)).result
        finally:
            await self.repo.remove_worktree(place)

    async def observe(self, worktree: Path, command: str, *, before: Callable[[], None] | None = None) -> GateRun:
        """One run of `command` on the tree in `worktree`, not judged (a base's run), remembered by tree;
        `before` is called when it actually runs."""
        ran = False

        async def once() -> GateResult:
            nonlocal ran
            ran = True
            if before is not None:
                before()
            return await self._run_once(command, worktree)

        key = await self._key(worktree, command)
        result = await (once() if self.cache is None else self.cache.run(key, once))
        return GateRun(result, ran=ran)

    async def _run_once(self, command: str, worktree: Path, *, known_failing: list[str] | None = None,
                        extra: Mapping[str, str] | None = None) -> GateResult:
        """One sandboxed, watched run of the command line (through the launcher), named as given; `extra`
        variables are added to the environment's own (appended to a variable it has)."""
        env, box = await asyncio.to_thread(self._environment, worktree)
        for name, value in (extra or {}).items():
            env[name] = f"{env[name]} {value}" if env.get(name) else value
        as_on_base = await self._as_on_base(command, worktree)
        launched = self._launch(as_on_base.command if as_on_base else command)
        await asyncio.to_thread(_write, worktree, as_on_base.files if as_on_base else {})
        try:
            result = await self._watched(f"the gate `{command}`", worktree, run_gate(
                launched, worktree, self.request.timeout_s, env, box, known_failing=known_failing or ()),
                lambda run: run["output"])
        finally:
            await asyncio.to_thread(_remove, worktree, as_on_base.files if as_on_base else {})
        return base_command.named_as_given(result, command, launched, as_on_base)

    async def _package_run(self, package: PackageGate, worktree: Path,
                           extra: Mapping[str, str] | None = None) -> GateResult:
        """One sandboxed run of a monorepo package's command in its folder of `worktree`, as the base defines it
        (a task's edit to the package's script or Makefile doesn't change what runs), named as given."""
        folder, command = package["path"], package["command"]
        as_on_base = await self._as_on_base(command, worktree, folder)
        copies = as_on_base.files if as_on_base else {}
        run_as = package.copy()
        run_as["command"] = as_on_base.command if as_on_base else command
        await asyncio.to_thread(_write, worktree / folder, copies)
        try:
            result = await run_package(run_as, self.repo.root, worktree, self.request.timeout_s, extra)
        finally:
            await asyncio.to_thread(_remove, worktree / folder, copies)
        return base_command.named_as_given(result, command, run_as["command"], as_on_base)

    async def _run_package_once(self, package: PackageGate, worktree: Path, extra: Mapping[str, str]) -> GateResult:
        """One watched run of a monorepo package's command (an overlay's)."""
        return await self._watched(f"the gate `{package['command']}` in {package['path']}", worktree,
                                   self._package_run(package, worktree, extra), lambda run: run["output"])

    async def _as_on_base(self, command: str, worktree: Path, folder: str = ".") -> base_command.BaseCommand | None:
        """`command` as the run's base defines it in `folder`, when the tree defines it otherwise
        (gate/choose/base_command.py)."""
        names = base_command.config_files(command)
        base_sha = self.decided.get("base_sha") if self.decided is not None else None
        if not names or base_sha is None:
            return None
        base = {name: await self.repo.show_file(base_sha, name if folder == "." else f"{folder}/{name}")
                for name in names}
        tree = await asyncio.to_thread(read_texts, worktree / folder, names)
        return base_command.resolve(command, base, {name: tree.get(name) for name in names})

    async def _key(self, worktree: Path, command: str) -> str | None:
        """The cache key of the worktree's tree (None: it holds uncommitted changes, or nothing is cached)."""
        if self.cache is None:
            return None
        tree = await worktree_tree(self.repo, worktree)
        if tree is None:
            return None
        setup = self.decided["setup"] if self.decided is not None else None
        return cache_key(tree, command, setup, await self._env_digest(worktree))

    async def _env_digest(self, worktree: Path) -> str:
        root = self.repo.root
        return await asyncio.to_thread(lambda: env_digest(root, worktree, gate_env(root, worktree)))

    def _environment(self, worktree: Path) -> tuple[dict[str, str], sandbox.Sandbox]:
        """The environment and sandbox of a command in `worktree` (blocking: read from the venvs' files); no
        command but the hidden tests' own run can read a hidden test."""
        feature = worktree.parent.parent.name if worktree.parent.name == hidden.FOLDER else None
        box = sandbox.for_worktree(worktree)
        if self.hidden is not None:
            box = box.with_masked(*self.hidden.sources())
        return {**gate_env(self.repo.root, worktree, feature), **self.env_extra}, box

    def _launch(self, command: str) -> str:
        return self.launcher(command) if self.launcher is not None else command

    async def _watched(self, what: str, worktree: Path, running: Awaitable[T], output: Callable[[T], str]) -> T:
        if self.watch is None:
            return await running
        return await self.watch(what, worktree, running, output)


def _write(worktree: Path, files: Mapping[str, str]) -> None:
    """The base's config copies, written by us outside the sandbox: whatever the tree has under their (reserved)
    names is removed first, and the write follows no link (a committed link to a file of the user's)."""
    for path, text in files.items():
        (worktree / path).unlink(missing_ok=True)
        confined.write_under(worktree, path, text, "the base's config copy")


def _remove(worktree: Path, files: Mapping[str, str]) -> None:
    for path in files:
        (worktree / path).unlink(missing_ok=True)
