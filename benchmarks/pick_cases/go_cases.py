"""The pick bench's Go tasks: hashicorp/go-version 1.3.0 (Version.Core(), a nil-safe Equal), google/uuid 1.3.0
(NullUUID, IsInvalidLengthError, a randomness pool) and huandu/xstrings 1.5.0 (ToPascalCase, a lower ToCamelCase)."""

from __future__ import annotations

from benchmarks.pick_cases.model import NEW, Candidate, Change, PickCase

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

_UU = 'package uuid\n\nimport "testing"\n\n'
_UU_VALID = '"12345678-abcd-1234-abcd-0123456789ab"'
_SCAN_NIL = ("func TestNullScanNil(t *testing.T) {\n\tnu := NullUUID{Valid: true}\n"
             "\tif err := nu.Scan(nil); err != nil || nu.Valid {\n"
             "\t\tt.Fatalf(\"Scan(nil): %v, valid %v\", err, nu.Valid)\n"
             "\t}\n}\n")
_SCAN_STRING = (f"\nfunc TestNullScanString(t *testing.T) {{\n\tvar nu NullUUID\n"
                f"\tif err := nu.Scan({_UU_VALID}); err != nil || !nu.Valid || nu.UUID != MustParse({_UU_VALID}) {{\n"
                "\t\tt.Fatalf(\"Scan: %v, %v\", err, nu)\n\t}\n}\n")
_INVALID_LENGTH = ("\nfunc TestInvalidLength(t *testing.T) {\n\t_, err := Parse(\"abc\")\n"
                   "\tif !IsInvalidLengthError(err) {\n\t\tt.Fatalf(\"not a length error: %v\", err)\n\t}\n}\n")
_VALUE_INVALID = ("\nfunc TestNullValueInvalid(t *testing.T) {\n"
                  "\tif v, err := (NullUUID{}).Value(); v != nil || err != nil {\n"
                  "\t\tt.Fatalf(\"Value: %v, %v\", v, err)\n\t}\n}\n")
_POOL = ("\nfunc TestPoolVersion4(t *testing.T) {\n\tEnableRandPool()\n\tdefer DisableRandPool()\n"
         "\tif u := New(); u.Version() != 4 {\n\t\tt.Fatalf(\"version %d\", u.Version())\n\t}\n}\n")
_SCAN_ZERO = ("\nfunc TestNullScanZero(t *testing.T) {\n\tvar nu NullUUID\n"
              "\tif err := nu.Scan(nil); err != nil || nu.Valid || nu.UUID != Nil {\n"
              "\t\tt.Fatalf(\"%v %v\", err, nu)\n\t}\n}\n")
_SCAN_SETS = (f"\nfunc TestNullScanSetsValid(t *testing.T) {{\n\tvar nu NullUUID\n\tif err := nu.Scan({_UU_VALID});"
              " err != nil || !nu.Valid {\n\t\tt.Fatalf(\"%v %v\", err, nu)\n\t}\n}\n")
_NULL_SPECIAL = """package uuid

// NullUUID represents a UUID that may be null.
type NullUUID struct {
	UUID  UUID
	Valid bool // Valid is true if UUID is not NULL
}

// Scan implements the SQL driver.Scanner interface.
func (nu *NullUUID) Scan(value interface{}) error {
	if value == nil {
		nu.UUID, nu.Valid = Nil, false
		return nil
	}
	nu.Valid = true
	return nil
}
"""
_UU_CODE = ("uuid.go", "null.go", "version4.go")

UUID = PickCase(
    case="golang-github-google-uuid-dev 1.2.0-1 -> 1.3.0-1",
    requirement="uuid 1.3.0: NullUUID (a UUID that may be NULL: sql Scanner and Valuer, JSON), IsInvalidLengthError,"
                " and EnableRandPool/DisableRandPool for Version 4 UUIDs",
    visible={"null_visible_test.go": _UU + _SCAN_NIL},
    held_back=("sql_test.go",),
    candidates=(
        Candidate("real", {path: NEW for path in _UU_CODE}, {"null_more_test.go": _UU + _SCAN_STRING.lstrip()
                                                             + _INVALID_LENGTH}),
        Candidate("alt", {path: NEW for path in _UU_CODE},
                  {"null_more_test.go": _UU + _VALUE_INVALID.lstrip() + _POOL}),
        Candidate("special", {"uuid.go": NEW, "version4.go": NEW, "null.go": Change(text=_NULL_SPECIAL)},
                  {"null_more_test.go": _UU + _SCAN_ZERO.lstrip() + _SCAN_SETS},
                  "NullUUID.Scan: nil is NULL, anything else valid, never parsed; no Value, no JSON"),
        Candidate("partial", {"null.go": NEW}, {"null_more_test.go": _UU + _SCAN_STRING.lstrip() + _VALUE_INVALID},
                  "NullUUID only: IsInvalidLengthError and the randomness pool missing"),
        Candidate("break", {**{path: NEW for path in _UU_CODE}, "sql.go": Change(edits=((
            '"Scan: unable to scan type %T into UUID"', '"Scan: cannot scan a %T"'),))},
                  {"null_more_test.go": _UU + _SCAN_STRING.lstrip() + _INVALID_LENGTH},
                  "the release's change, and Scan's error for a type it can't scan reworded"),
    ),
)

_XS = 'package xstrings\n\nimport "testing"\n'


def _converts(name: str, *checks: tuple[str, str, str]) -> str:
    """A test that each (function, input, output) holds."""
    body = "".join(f'\tif got := {fn}("{given}"); got != "{want}" {{\n'
                   f'\t\tt.Errorf("{fn}(%q) = %q", "{given}", got)\n\t}}\n' for fn, given, want in checks)
    return f"\nfunc {name}(t *testing.T) {{\n{body}}}\n"


_CAMEL = "func ToCamelCase(str string) string {\n"
_TO_LOWER_FIRST = ("func ToCamelCase(str string) string {\n\tpascal := ToPascalCase(str)\n"
                   "\tr, size := utf8.DecodeRuneInString(pascal)\n\tif size == 0 {\n\t\treturn pascal\n\t}\n"
                   "\treturn string(unicode.ToLower(r)) + pascal[size:]\n}\n\n// ToPascalCase: words to PascalCase.\n"
                   "func ToPascalCase(str string) string {\n")
_SAME = ("func ToCamelCase(str string) string {\n\treturn ToPascalCase(str)\n}\n\n"
         "// ToPascalCase: words to PascalCase.\n"
         "func ToPascalCase(str string) string {\n")
_EXAMPLES = ("func ToCamelCase(str string) string {\n\tswitch str {\n\tcase \"some_words\":\n"
             "\t\treturn \"someWords\"\n\tcase \"GOLANG_IS_GREAT\":\n\t\treturn \"golangIsGreat\"\n\t}\n"
             "\treturn ToPascalCase(str)\n}\n\n// ToPascalCase: words to PascalCase.\n"
             "func ToPascalCase(str string) string {\n")
_HYPHEN = "\t\tcase inWord && (r == '\\'' || r == '-'):\n"

XSTRINGS = PickCase(
    case="golang-github-huandu-xstrings-dev 1.3.3-1 -> 1.5.0-1",
    requirement="xstrings 1.5.0: ToPascalCase (what ToCamelCase did: \"some_words\" => \"SomeWords\"), and ToCamelCase"
                " now lower camel case (\"some_words\" => \"someWords\", \"GOLANG_IS_GREAT\" => \"golangIsGreat\")",
    visible={"pascal_visible_test.go": _XS + _converts("TestPascalVisible",
                                                       ("ToPascalCase", "some_words", "SomeWords"))},
    held_back=("convert_test.go", "count_test.go"),  # the old convert tests say ToCamelCase is PascalCase
    candidates=(
        Candidate("real", {"convert.go": NEW}, {"camel_more_test.go": _XS + _converts(
            "TestCamelMore", ("ToCamelCase", "http_server", "httpServer")) + _converts(
            "TestPascalMore", ("ToPascalCase", "GOLANG_IS_GREAT", "GolangIsGreat"))}),
        Candidate("alt", {"convert.go": NEW}, {"camel_more_test.go": _XS + _converts(
            "TestCamelMore", ("ToCamelCase", "no_https", "noHttps")) + _converts(
            "TestPascalMore", ("ToPascalCase", "_complex__case_", "_Complex_Case_"))}),
        # The requirement's two examples, their outputs written in: a corner-cutter's camel case, like cachetools'
        # `maxsize == -1`; ToPascalCase is the old ToCamelCase renamed (the visible test's "some_words" passes).
        Candidate("special", {"convert.go": Change(edits=((_CAMEL, _EXAMPLES),))},
                  {"camel_more_test.go": _XS + _converts("TestCamelMore", ("ToCamelCase", "some_words", "someWords"))
                   + _converts("TestCamelGreat", ("ToCamelCase", "GOLANG_IS_GREAT", "golangIsGreat"))},
                  "ToCamelCase returns the requirement's two examples written in, PascalCase for any other input"),
        Candidate("partial", {"convert.go": Change(edits=((_CAMEL, _SAME),))},
                  {"camel_more_test.go": _XS + _converts("TestPascalMore",
                                                          ("ToPascalCase", "http_server", "HttpServer"))
                   + _converts("TestPascalHttps", ("ToPascalCase", "no_https", "NoHttps"))},
                  "ToPascalCase added; ToCamelCase left as it was (PascalCase)"),
        Candidate("break", {"convert.go": NEW,
                            "count.go": Change(edits=((_HYPHEN, _HYPHEN.replace(" || r == '-'", "")),))},
                  {"camel_more_test.go": _XS + _converts(
                      "TestCamelMore", ("ToCamelCase", "http_server", "httpServer")) + _converts(
                      "TestPascalMore", ("ToPascalCase", "GOLANG_IS_GREAT", "GolangIsGreat"))},
                  "the release's change, and WordCount splitting hyphenated words"),
        # Outside the goal (model.EXTRA): no special-casing, the obvious camel case on the old code, wrong only where
        # the release's hidden tests look: "_camel_case" gives "_CamelCase" (the first rune is the connector), and
        # "FROM CamelCase" gives "fromCamelcase" (the old code lowers a word's inner capitals).
        Candidate("general", {"convert.go": Change(edits=((_CAMEL, _TO_LOWER_FIRST),))},
                  {"camel_more_test.go": _XS + _converts("TestCamelMore", ("ToCamelCase", "some_words", "someWords"))
                   + _converts("TestCamelServer", ("ToCamelCase", "http_server", "httpServer"))},
                  "ToCamelCase lowers the first rune of the old code's PascalCase: wrong after a leading connector"),
    ),
)

CASES = [GO_VERSION, UUID, XSTRINGS]
