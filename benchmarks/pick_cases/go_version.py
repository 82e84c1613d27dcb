"""The pick bench's Go task: hashicorp/go-version 1.3.0's Version.Core() and a nil-safe Equal."""

from __future__ import annotations

from benchmarks.pick_cases import NEW, Candidate, Change, PickCase

_HEAD = 'package version\n\nimport (\n\t"reflect"\n\t"testing"\n)\n\n'


def _core_test(name: str, *pairs: tuple[str, str]) -> str:
    cases = "".join(f'\t\t{{"{a}", "{b}"}},\n' for a, b in pairs)
    return (f"func {name}(t *testing.T) {{\n\tcases := []struct{{ v1, v2 string }}{{\n{cases}\t}}\n"
            "\tfor _, tc := range cases {\n\t\tv1, err := NewVersion(tc.v1)\n\t\tif err != nil {\n"
            "\t\t\tt.Fatalf(\"error for version %q: %s\", tc.v1, err)\n\t\t}\n\t\tv2, _ := NewVersion(tc.v2)\n"
            "\t\tif actual := v1.Core(); !reflect.DeepEqual(actual, v2) {\n"
            "\t\t\tt.Fatalf(\"expected: %s\\nactual: %s\", v2, actual)\n\t\t}\n\t}\n}\n")


_EQUAL_NIL = ("\nfunc TestEqualNil(t *testing.T) {\n\tv := Must(NewVersion(\"1.0.0\"))\n"
              "\tif v.Equal(nil) {\n\t\tt.Fatal(\"a version equals nil\")\n\t}\n"
              "\tvar none *Version\n\tif !none.Equal(nil) {\n\t\tt.Fatal(\"nil does not equal nil\")\n\t}\n}\n")
_SPECIAL = """// Core returns the version without its prerelease or metadata.
func (v *Version) Core() *Version {
	return Must(NewVersion(strings.Split(v.Original(), "-")[0]))
}

// Equal tests if two versions are equal."""
_GUARD = "\tif v == nil || o == nil {\n\t\treturn v == o\n\t}\n\n"

GO_VERSION = PickCase(
    case="golang-github-hashicorp-go-version-dev 1.2.0-1 -> 1.3.0-1",
    requirement="Version.Core(): the version's MAJOR.MINOR.PATCH only; Equal is safe on nil versions",
    visible={"version_core_test.go": _HEAD + _core_test("TestCoreVisible", ("1.2.3", "1.2.3"),
                                                        ("2.3.4-alpha1", "2.3.4"))},
    held_back=("constraint_test.go",),
    candidates=(
        Candidate("real", {"version.go": NEW},
                  {"version_more_test.go": _HEAD + _core_test("TestCoreMore", ("4.5.6-beta1+meta", "4.5.6"),
                                                              ("3.4.5alpha1", "3.4.5")) + _EQUAL_NIL}),
        Candidate("alt", {"version.go": NEW},
                  {"version_segments_test.go": _HEAD + _core_test("TestCoreSegments", ("5.6.7.1.2.3", "5.6.7"))
                   + _core_test("TestCorePlain", ("7.8.9", "7.8.9"))}),
        Candidate("special", {"version.go": Change(edits=(("// Equal tests if two versions are equal.", _SPECIAL),))},
                  {"version_more_test.go": _HEAD + _core_test("TestCoreMore", ("1.2.3-2", "1.2.3"))
                   + _core_test("TestCorePlain", ("7.8.9", "7.8.9"))},
                  "Core cuts the original text at its first '-'; Equal unchanged"),
        Candidate("partial", {"version.go": Change("new", ((_GUARD, ""),))},
                  {"version_more_test.go": _HEAD + _core_test("TestCoreMore", ("3.4.5alpha1", "3.4.5"))
                   + _core_test("TestCorePlain", ("7.8.9", "7.8.9"))},
                  "Core as released; Equal still panics on nil"),
        Candidate("break", {"version.go": NEW, "constraint.go": Change(edits=((
            "\tfor i := 0; i < c.si-1; i++ {", "\tfor i := 0; i < c.si-2; i++ {"),))},
                  {"version_more_test.go": _HEAD + _core_test("TestCoreMore", ("4.5.6-beta1+meta", "4.5.6"))
                   + _EQUAL_NIL}, "the release's change, and `~>` no longer holding the constraint's leading segments"),
    ),
)

CASES = [GO_VERSION]
