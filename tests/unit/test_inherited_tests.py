"""A test a file inherits from a mixin is the mixin's (issue 31: "a file accepts every test in it"): found replaying
cachetools 7.3.3 -> 8.0.0 (benchmarks/real_history), whose release removed test_copy and five more methods from
`CacheTestMixin` in tests/__init__.py, which tests/test_cache.py's `CacheTest` (and six more classes) inherit. The
coach accepted tests/__init__.py, the file the release changed, and the gate still refused the release, naming the
tests "gone: deselected by pyproject.toml:18" (the version bump)."""

from __future__ import annotations

from orchestrator.facts import Acceptance, GateResult
from orchestrator.gate.spec.accounting import TreeDiff, accept, account, unaccepted
from orchestrator.gate.spec.test_files import inherited_tests

BASE_FILES = ["pyproject.toml", "src/cachetools/__init__.py", "tests/__init__.py", "tests/test_cache.py",
              "tests/test_lru.py"]
MIXIN = """class CacheTestMixin(SimplifiedTestCaseProtocol):
    Cache: type

    def test_defaults(self):
        cache = self.Cache(maxsize=1)
        self.assertEqual(0, len(cache))

    def test_copy(self):
        cache = self.Cache(2)
        cache.update({1: 1, 2: 2})
"""
MIXIN_AFTER = MIXIN.split("    def test_copy", maxsplit=1)[0]
TEST_CACHE = """import unittest

import cachetools

from . import CacheTestMixin


class CacheTest(unittest.TestCase, CacheTestMixin):
    Cache = cachetools.Cache
"""
TEST_LRU = TEST_CACHE.replace("CacheTest(", "LRUCacheTest(") + """
    def test_copy(self):  # its own: not the mixin's
        pass
"""


def test_a_test_method_a_collected_file_does_not_define_is_its_mixins() -> None:
    inherited = inherited_tests({"tests/__init__.py": MIXIN},
                                {"tests/test_cache.py": TEST_CACHE, "tests/test_lru.py": TEST_LRU})
    assert inherited == {"tests/test_cache.py::test_defaults": "tests/__init__.py",
                         "tests/test_cache.py::test_copy": "tests/__init__.py",
                         "tests/test_lru.py::test_defaults": "tests/__init__.py"}


def test_a_test_removed_from_a_mixin_is_deleted_from_it_and_accepted_with_it() -> None:
    base = _pytest_run(["tests.test_cache::CacheTest::test_copy", "tests.test_cache::CacheTest::test_defaults",
                        "tests.test_lru::LRUCacheTest::test_copy", "tests.test_lru::LRUCacheTest::test_defaults"])
    run = _pytest_run(["tests.test_cache::CacheTest::test_defaults", "tests.test_lru::LRUCacheTest::test_defaults"])
    diff = TreeDiff(modified=frozenset({"tests/__init__.py", "pyproject.toml"}), config_lines={"pyproject.toml": 18},
                    names={"tests/__init__.py": MIXIN_AFTER},
                    inherited=inherited_tests({"tests/__init__.py": MIXIN},
                                              {"tests/test_cache.py": TEST_CACHE, "tests/test_lru.py": TEST_LRU}))
    changes = account(base, run, diff, BASE_FILES)
    assert [(change["test"], change["detail"], change["file"]) for change in changes] == [
        ("tests.test_cache::CacheTest::test_copy", "deleted from tests/__init__.py", "tests/__init__.py"),
        # test_lru.py defines its own test_copy: the mixin's acceptance doesn't reach it.
        ("tests.test_lru::LRUCacheTest::test_copy", "deselected by pyproject.toml:18", "tests/test_lru.py")]
    judged = accept(changes, [Acceptance(test="tests/__init__.py", reason="8.0.0 drops copy support")])
    assert [change["test"] for change in unaccepted(judged)] == ["tests.test_lru::LRUCacheTest::test_copy"]


def _pytest_run(passing: list[str]) -> GateResult:
    return GateResult(passed=True, command="python -m pytest -q", summary="", output="", exit_code=0,
                      tests_passed=len(passing), tests_failed=0, failing=[], new_failures=[], ran_classes=passing,
                      runner="pytest", passing=passing)
