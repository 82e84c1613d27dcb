"""Base test support among the code (gate/prepare/support.py): a helper in the product's folders that only the base's
tests import and that asserts is on the test side by its role; a module the product's code imports, or that computes
and returns, stays code. Judged on a real git repo's base commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.gate.prepare.support import base_test_support, python_asserts
from orchestrator.repo.git import GitRepo

FILES = {
    "calc/__init__.py": "from calc.core import total\n",
    "calc/core.py": "def total(xs):\n    assert xs is not None\n    return sum(xs)\n",
    "calc/mul.py": "def mul(a, b):\n    assert isinstance(a, int)\n    return a * b\n",
    "calc/verify.py": "def equal(a, b):\n    assert a == b, (a, b)\n",
    "calc/checks.py": "def positive(x):\n    assert x > 0\n",
    "calc/unused.py": "def odd(x):\n    assert x % 2\n",
    "calc/fixture.py": "import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [1, 2]\n",
    "tests/test_calc.py": "from calc.mul import mul\nfrom calc.verify import equal\nfrom calc import checks, fixture\n"
                          "from calc.core import total\n",
    "lib/check.js": "const assert = require('node:assert');\nexports.same = (a, b) => assert.strictEqual(a, b);\n",
    "lib/guard.js": "const assert = require('assert');\nexports.guard = (x) => assert(x);\n",
    "index.js": "const { guard } = require('./lib/guard');\nexports.run = (x) => guard(x);\n",
    "test/a.test.js": "const { same } = require('../lib/check');\nconst { guard } = require('../lib/guard');\n",
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "internal/check/check.go": "package check\n\nimport \"testing\"\n\nfunc Equal(t *testing.T, a, b int) {}\n",
    "internal/check/format.go": "package check\n\nfunc show(a int) string { return \"\" }\n",
    "internal/store/store.go": "package store\n\nfunc Get() int { return 1 }\n",
    "mul.go": "package calc\n\nimport \"example.com/calc/internal/store\"\n\nfunc Mul() int { return store.Get() }\n",
    "mul_test.go": "package calc\n\nimport (\n\t\"testing\"\n\n\t\"example.com/calc/internal/check\"\n"
                   "\t\"example.com/calc/internal/store\"\n)\n\n"
                   "func TestMul(t *testing.T) { check.Equal(t, Mul(), store.Get()) }\n",
}


def _base(folder: Path) -> GitRepo:
    for path, text in FILES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=folder, check=True)
    return GitRepo(folder)


async def test_only_helpers_the_tests_alone_import_are_support(tmp_path: Path) -> None:
    repo = _base(tmp_path)
    found = await base_test_support(repo, "HEAD", sorted(FILES), frozenset(FILES))
    assert found == {"calc/verify.py", "calc/checks.py", "calc/fixture.py", "lib/check.js",
                     "internal/check/check.go", "internal/check/format.go"}, sorted(found)
    # calc/mul.py computes and returns; calc/core.py the package imports; calc/unused.py nothing imports;
    # lib/guard.js the product's index.js loads; internal/store's package imports no `testing`.


def test_a_helper_asserts_and_returns_nothing() -> None:
    assert python_asserts("def equal(a, b):\n    if a != b:\n        raise AssertionError(a)\n")
    assert python_asserts("from unittest import TestCase\n")
    assert not python_asserts("from unittest.mock import patch\n")
    assert not python_asserts("def mul(a, b):\n    assert a\n    return a * b\n")
    assert not python_asserts("def broken(:\n")
