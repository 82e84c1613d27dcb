"""The pick bench's Python tasks."""

from __future__ import annotations

from benchmarks.pick_cases.model import NEW, Candidate, Change, PickCase


def _raises(name: str, call: str) -> str:
    return f"\n\ndef {name}():\n    with pytest.raises(ValueError):\n        {call}\n"


_CT = "import math\n\nimport pytest\n\nfrom cachetools import Cache, FIFOCache, LFUCache, LRUCache, RRCache, TTLCache\n"
_CT_INIT = "    def __init__(self, maxsize, getsizeof=None):\n        if getsizeof:\n"


def _before(check: str) -> str:
    """Cache.__init__ with `check` first."""
    return _CT_INIT.replace("        if getsizeof:\n", check + "        if getsizeof:\n")


_LRU_TOUCH = ("    def __getitem__(self, key, cache_getitem=Cache.__getitem__):\n"
              "        value = cache_getitem(self, key)\n"
              "        if key in self:  # __missing__ may not store item\n            self.__touch(key)\n"
              "        return value\n\n    def __setitem__(self, key, value, cache_setitem=Cache.__setitem__):\n"
              "        cache_setitem(self, key, value)\n        self.__touch(key)\n\n"
              "    def __delitem__(self, key, cache_delitem=Cache.__delitem__):\n        cache_delitem(self, key)\n"
              "        del self.__order[key]\n")
_REAL_TESTS = _CT + _raises("test_maxsize_minus_two", "Cache(maxsize=-2)") + _raises(
    "test_maxsize_negative_float", "TTLCache(maxsize=-1.5, ttl=1)")

CACHETOOLS = PickCase(
    case="cachetools 7.1.7 -> 7.1.8",
    requirement="a cache refuses a negative maxsize (ValueError)",
    visible={"tests/test_maxsize.py": _CT + _raises("test_maxsize_minus_one", "Cache(maxsize=-1)")},
    held_back=("tests/test_lru.py",),
    candidates=(
        Candidate("real", {"src/cachetools/__init__.py": NEW}, {"tests/test_maxsize_more.py": _REAL_TESTS}),
        Candidate("alt", {"src/cachetools/__init__.py": Change(edits=((
            _CT_INIT, _before("        if not maxsize >= 0:\n"
                              "            raise ValueError('a negative maxsize')\n")),))},
                  {"tests/test_maxsize_more.py": _CT + _raises("test_lfu_negative", "LFUCache(maxsize=-3)")
                   + "\n\ndef test_maxsize_zero():\n    assert Cache(maxsize=0).maxsize == 0\n"}),
        Candidate("special", {"src/cachetools/__init__.py": Change(edits=((
            _CT_INIT, _before("        if maxsize == -1:\n"
                              "            raise ValueError('maxsize must be non-negative')\n")),))},
                  {"tests/test_maxsize_more.py": _CT + _raises("test_lru_minus_one", "LRUCache(maxsize=-1)")
                   + _raises("test_fifo_minus_one", "FIFOCache(maxsize=-1)")},
                  "only maxsize -1 refused"),
        Candidate("partial", {"src/cachetools/__init__.py": Change(edits=((
            _CT_INIT, _before("        if isinstance(maxsize, int) and maxsize < 0:\n"
                                "            raise ValueError('maxsize must be non-negative')\n")),))},
                  {"tests/test_maxsize_more.py": _CT + _raises("test_maxsize_minus_two", "Cache(maxsize=-2)")
                   + _raises("test_rr_negative", "RRCache(maxsize=-7)")},
                  "a negative float maxsize (-inf) still taken"),
        Candidate("break", {"src/cachetools/__init__.py": Change("new", ((_LRU_TOUCH, _LRU_TOUCH.replace(
            "        if key in self:  # __missing__ may not store item\n            self.__touch(key)\n", "")),))},
                  {"tests/test_maxsize_more.py": _REAL_TESTS},
                  "the release's change, and an LRU cache's read no longer marks the key recently used"),
    ),
)

_BO = ("from boltons.dictutils import OMD\nfrom boltons.setutils import IndexedSet\n"
       "from boltons.strutils import singularize\n")
_BO_CODE = ("boltons/dictutils.py", "boltons/fileutils.py", "boltons/setutils.py", "boltons/strutils.py")


def _same(name: str, word: str) -> str:
    return f"\n\ndef {name}():\n    assert singularize({word!r}) == {word!r}\n"


_SLICE = ("\n\ndef test_slice_after_pop():\n    x = IndexedSet(range(10))\n    x.pop(2)\n"
          "    assert list(x[1:4]) == [1, 3, 4]\n")
_OMD_COPY = ("\n\ndef test_omd_copy():\n    import copy\n\n    omd = OMD([('a', 1), ('a', 2)])\n"
             "    assert copy.copy(omd).getlist('a') == [1, 2]\n")

BOLTONS = PickCase(
    case="boltons 26.0.0 -> 26.1.0",
    requirement="boltons 26.1.0's fixes: singularize leaves words ending in a double s alone; IndexedSet slices"
                " and indexes right after removals; OMD survives copy.copy/deepcopy; AtomicSaver and"
                " iter_find_files take path-like objects",
    visible={"tests/test_singular.py": _BO + _same("test_glass", "glass")},
    held_back=("tests/test_iterutils.py",),
    candidates=(
        Candidate("real", {path: NEW for path in _BO_CODE}, {"tests/test_fixes.py": _BO + _same("test_boss", "boss")
                                                            + _SLICE}),
        Candidate("alt", {path: NEW for path in _BO_CODE}, {"tests/test_fixes.py": _BO + _same("test_address",
                                                                                               "address") + _OMD_COPY}),
        Candidate("special", {**{path: NEW for path in _BO_CODE[:3]}, "boltons/strutils.py": Change(edits=((
            "    elif not word.endswith('s'):\n",
            "    elif word == 'glass':\n        return orig_word\n    elif not word.endswith('s'):\n"),))},
                  {"tests/test_fixes.py": _BO + _same("test_glass_capital", "Glass") + _SLICE},
                  "singularize special-cases 'glass'; the other fixes as released"),
        Candidate("partial", {"boltons/strutils.py": NEW},
                  {"tests/test_fixes.py": _BO + _same("test_boss", "boss") + _same("test_kiss", "kiss")},
                  "singularize fixed; IndexedSet, OMD and path-like fixes missing"),
        Candidate("break", {**{path: NEW for path in _BO_CODE}, "boltons/iterutils.py": Change(edits=((
            "    return next(filter(key, iterable), default)\n", "    return next(filter(key, iterable), None)\n"),))},
                  {"tests/test_fixes.py": _BO + _same("test_boss", "boss") + _SLICE},
                  "the release's fixes, and iterutils.first ignoring its default"),
    ),
)

_MI = "import unittest\n\nimport more_itertools as mi\n\n\nclass {name}(unittest.TestCase):\n"
_MI_RAISES = ("    def test_{name}(self):\n        with self.assertRaises(mi.UnequalIterablesError):\n"
              "            mi.sort_together({args}, strict=True)\n")
_MI_EQUAL = ("    def test_equal_lengths(self):\n"
             "        self.assertEqual(mi.sort_together([(3, 1, 2), 'cab'], strict=True),"
             " [(1, 2, 3), ('a', 'b', 'c')])\n")
_MI_UNSORTABLE = ("    def test_unsortable(self):\n"
                  "        self.assertEqual(len(list(mi.distinct_permutations([1, 'a']))),"
                  " 2)\n")
_MI_SIGNATURE = "def sort_together(iterables, key_list=(0,), key=None, reverse=False):\n"
_MI_ZIP = "    return list(\n        zip(*sorted(zip(*iterables), key=key_argument, reverse=reverse))\n    )\n"
_MI_ZIPPER = "    zipper = zip_equal if strict else zip\n"


def _mi_tests(*bodies: str) -> str:
    return _MI.format(name="SortTogetherStrictTest") + "\n".join(bodies)


MORE_ITERTOOLS = PickCase(
    case="more-itertools 10.3.0 -> 10.4.0",
    requirement="more-itertools 10.4.0: sort_together(strict=True) refuses iterables of unequal lengths;"
                " distinct_permutations takes unsortable items; circular_shifts takes steps; sample takes counts"
                " and strict; seekable.relative_seek; set_partitions takes min_size and max_size",
    visible={"tests/test_sort_strict.py": _MI.format(name="VisibleTest") + _MI_RAISES.format(
        name="lists", args="[(4, 3, 2, 1), ('a', 'b', 'c')]")},
    # The release rewrote tests of test_more.py the old code passes (circular_shifts): the whole suite is held back.
    held_back=("tests/test_more.py", "tests/test_recipes.py"),
    candidates=(
        Candidate("real", {"more_itertools/more.py": NEW, "more_itertools/recipes.py": NEW},
                  {"tests/test_sort_more.py": _mi_tests(_MI_RAISES.format(name="ranges", args="[range(4), range(5)]"),
                                                        _MI_EQUAL)}),
        Candidate("alt", {"more_itertools/more.py": NEW, "more_itertools/recipes.py": NEW},
                  {"tests/test_sort_more.py": _mi_tests(_MI_RAISES.format(
                      name="generator", args="(range(i) for i in range(4))"), _MI_UNSORTABLE)}),
        Candidate("special", {"more_itertools/more.py": Change("new", ((_MI_ZIPPER, (
            "    if strict and len(iterables[0]) != len(iterables[1]):\n        raise UnequalIterablesError()\n"
            "    zipper = zip\n")),)), "more_itertools/recipes.py": NEW},
                  {"tests/test_sort_more.py": _mi_tests(_MI_RAISES.format(name="tuples", args="[(1, 2), (3,)]"),
                                                        _MI_EQUAL)},
                  "strict compares the first two iterables' len() only"),
        Candidate("partial", {"more_itertools/more.py": Change(edits=(
            (_MI_SIGNATURE, _MI_SIGNATURE.replace("reverse=False", "reverse=False, strict=False")),
            (_MI_ZIP, _MI_ZIPPER + _MI_ZIP.replace("zip(", "zipper("))))},
                  {"tests/test_sort_more.py": _mi_tests(_MI_RAISES.format(name="ranges", args="[range(4), range(5)]"),
                                                        _MI_EQUAL)},
                  "sort_together's strict only; the release's other changes missing"),
        Candidate("break", {"more_itertools/more.py": NEW, "more_itertools/recipes.py": Change("new", ((
            "    return sum(map(pred, iterable))\n", "    return sum(map(bool, iterable))\n"),))},
                  {"tests/test_sort_more.py": _mi_tests(_MI_RAISES.format(name="ranges", args="[range(4), range(5)]"),
                                                        _MI_EQUAL)},
                  "the release's change, and quantify ignoring its predicate"),
    ),
)


CASES = [CACHETOOLS, BOLTONS, MORE_ITERTOOLS]
