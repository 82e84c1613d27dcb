"""The pick bench's Python tasks."""

from __future__ import annotations

from benchmarks.pick_cases import NEW, Candidate, Change, PickCase


def _raises(name: str, call: str) -> str:
    return f"\n\ndef {name}():\n    with pytest.raises(ValueError):\n        {call}\n"


_CT = "import math\n\nimport pytest\n\nfrom cachetools import Cache, FIFOCache, LFUCache, LRUCache, RRCache, TTLCache\n"
_CT_INIT = "    def __init__(self, maxsize, getsizeof=None):\n        if getsizeof:\n"


def _before(check: str) -> str:
    """Cache.__init__ with `check` first."""
    return _CT_INIT.replace("        if getsizeof:\n", check + "        if getsizeof:\n")


_LRU_TOUCH = ("    def __getitem__(self, key, cache_getitem=Cache.__getitem__):\n        value = cache_getitem(self, key)\n"
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
            _CT_INIT, _before("        if not maxsize >= 0:\n            raise ValueError('a negative maxsize')\n")),))},
                  {"tests/test_maxsize_more.py": _CT + _raises("test_lfu_negative", "LFUCache(maxsize=-3)")
                   + "\n\ndef test_maxsize_zero():\n    assert Cache(maxsize=0).maxsize == 0\n"}),
        Candidate("special", {"src/cachetools/__init__.py": Change(edits=((
            _CT_INIT, _before("        if maxsize == -1:\n            raise ValueError('maxsize must be non-negative')\n")),))},
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

_BO = "from boltons.dictutils import OMD\nfrom boltons.setutils import IndexedSet\nfrom boltons.strutils import singularize\n"
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

CASES = [CACHETOOLS, BOLTONS]
