"""Go and Rust code that knows it is judged, read with tree-sitter's grammars: `testing.Testing()`, a test binary's
name or flags, `cfg!(test)` and `#[cfg(not(test))]` outside test modules, exits in `init()` or a ctor, swapped
standard streams, and `Equal` methods or `PartialEq` impls that ignore their operand; C and C++ code whose
preprocessor asks for a macro only a test build defines (a test header's include guard, `UNIT_TESTING`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from orchestrator.gate.spec.code_tokens import (
    LIES,
    PRESENCE,
    TOUCHES,
    Finding,
    ancestors,
    asks_git_kind,
    compared,
    deciding,
    line_of,
    names_gate_place,
    names_runner,
    names_runner_variable,
    normal,
    parse,
    probe_bound,
    scope_of,
    statement_of,
    string_value,
    text_of,
    walk,
)

_GO_FUNCTIONS = frozenset({"function_declaration", "method_declaration", "func_literal"})
_GO_PROBES = re.compile(r"^(?:os\.(?:Args|Executable|Getenv|LookupEnv|Environ)|flag\.(?:Lookup|CommandLine)"
                        r"|runtime\.Caller|debug\.Stack)\b")
_GO_PLACES = re.compile(r"^(?:os\.(?:Getwd|Executable|ReadFile|Stat|Lstat|Open|ReadDir|Getenv|LookupEnv|TempDir)"
                        r"|filepath\.\w+|exec\.Command|runtime\.Caller|ioutil\.ReadFile)\b")
"""Where a Go program runs: the working directory, its binary or file, what a file or a program (git) says."""
_GO_CALLERS = re.compile(r"^(?:runtime\.Callers?|runtime\.FuncForPC|debug\.Stack|os\.Executable)\b")
"""Who called, or the binary's own name: a branch on them with any string tells a test from any other caller."""
_GO_PLATFORM_TAGS = frozenset({
    "aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js", "linux", "nacl", "netbsd",
    "openbsd", "plan9", "solaris", "wasip1", "windows", "zos", "unix", "386", "amd64", "amd64p32", "arm", "arm64",
    "arm64be", "armbe", "loong64", "mips", "mips64", "mips64le", "mips64p32", "mips64p32le", "mipsle", "ppc",
    "ppc64", "ppc64le", "riscv", "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm", "cgo", "gc", "gccgo",
    "ignore", "purego", "race", "msan", "asan", "appengine", "tinygo", "boringcrypto", "noasm", "gofuzz"})
"""Build tags of the platform and toolchain (a release and a test build agree on them)."""
_GO_COMPARING = frozenset({"Equal", "Equals", "Eq", "Is", "Compare"})
_STANDARD = re.compile(r"^(?:0|1|2|os\.Std(?:out|err)(?:\.Fd\(\))?|(?:libc::)?STD(?:OUT|ERR)_FILENO)$")
_RUST_FUNCTIONS = frozenset({"function_item", "closure_expression"})
_RUST_LOOPS = frozenset({"for_expression", "while_expression", "loop_expression"})
_RUST_COMPOUNDS = frozenset({"if_expression", "match_expression", *_RUST_LOOPS})
_RUST_PROBES = re.compile(r"(?:env::(?:args|var|var_os|vars|current_exe)|thread::current)\b")
_RUST_PLACES = re.compile(r"(?:env::(?:current_dir|current_exe|var|temp_dir)|\bfile!|\b(?:option_)?env!|Command::new"
                          r"|fs::\w+|canonicalize|Path::new|PathBuf::from)")
"""Where a Rust program runs or was built: the working directory, its binary or file, the crate's folder
(`env!("CARGO_MANIFEST_DIR")`), what a file or a program (git) says."""
_GIT_KIND = re.compile(r"(?:IsRegular|ReadFile|is_file|read_to_string|fs::read\b)")
_GIT_EXISTENCE = re.compile(r"(?:os\.L?[Ss]tat|IsDir|\bexists\b|try_exists|metadata|is_dir)")
"""Whether `.git` is a file or what it holds; whether anything is in it (`.git/HEAD`): in a worktree, no."""
_RUST_CALLERS = re.compile(r"(?:thread::current|current_exe|Backtrace::)")
_RUST_COMPARING = frozenset({"eq", "ne", "partial_cmp", "cmp", "lt", "le", "gt", "ge"})


def _finding(node: Node, what: str, key: Node | None = None, compounds: frozenset[str] = frozenset()) -> Finding:
    if what.startswith(TOUCHES):
        return Finding(line_of(node), what, scope_of(node))
    return Finding(line_of(node), what, normal(text_of(key or statement_of(node, compounds))))


def _probed(node: Node, functions: frozenset[str], loops: frozenset[str], probes: re.Pattern[str], *,
            compounds: frozenset[str] = frozenset(), bound: frozenset[str] = frozenset()) -> bool:
    return any(probes.search(text_of(inner)) or (inner.type == "identifier" and text_of(inner) in bound)
               for header in deciding(node, functions, loops, compounds)
               for inner in walk(header) if inner.type in ("selector_expression", "scoped_identifier", "identifier",
                                                           "call_expression", "field_expression"))


def _strings(root: Node, functions: frozenset[str], loops: frozenset[str], probes: re.Pattern[str], *,
             callers: re.Pattern[str], places: re.Pattern[str], ids: frozenset[str],
             compounds: frozenset[str] = frozenset()) -> Iterator[Finding]:
    """Strings that name a runner where a probe decides; any string where its callers or its binary's name do
    (`runtime.Caller`, `thread::current().name()`), read directly or through a name bound to one; the gate's place
    compared where the code's own place decides, and `.git` read as a file."""
    bound = probe_bound(root, lambda value: any(probes.search(text_of(inner)) for inner in walk(value)))
    by_callers = probe_bound(root, lambda value: any(callers.search(text_of(inner)) for inner in walk(value)))
    placed: list[frozenset[str]] = []  # found once, and only for a place's name
    for node in walk(root):
        if (value := string_value(node)) is None or (node.parent is not None and string_value(node.parent)):
            continue
        shown = normal(text_of(statement_of(node, compounds)))[:100]
        if names_runner_variable(value):
            yield _finding(node, f"{PRESENCE} (`{value}`)", compounds=compounds)
        elif (names_runner(value) and _probed(node, functions, loops, probes, compounds=compounds, bound=bound)) or (
                value and _probed(node, functions, loops, callers, compounds=compounds, bound=by_callers)):
            yield _finding(node, f"{PRESENCE} (`{shown}`)", compounds=compounds)
        elif names_gate_place(value, ids) and compared(node):
            placed = placed or [probe_bound(root, lambda given: any(places.search(text_of(inner))
                                                                    for inner in walk(given)))]
            if _probed(node, functions, loops, places, compounds=compounds, bound=placed[0]):
                yield _finding(node, f"{PRESENCE} (asks where it runs: `{shown}`)", compounds=compounds)
        elif asks_git_kind(node, value, [*deciding(node, functions, loops, compounds), *_initialized(node)],
                           _GIT_KIND, _GIT_EXISTENCE):
            yield _finding(node, f"{PRESENCE} (asks whether it runs in a git worktree: `{shown}`)",
                           compounds=compounds)


def _initialized(node: Node) -> list[Node]:
    """The condition of a Go `if` whose initializer holds `node` (`if fi, err := os.Stat(".git"); fi.Mode()...`)."""
    for up in ancestors(node):
        if up.type == "if_statement":
            initializer = up.child_by_field_name("initializer")
            condition = up.child_by_field_name("condition")
            inside = initializer is not None and initializer.start_byte <= node.start_byte < initializer.end_byte
            return [condition] if inside and condition is not None else []
    return []


def _returns(body: Node | None, functions: frozenset[str], tail: bool) -> list[Node]:
    """The values a function body returns (`tail`: Rust's last expression too), not those of closures in it."""
    if body is None:
        return []
    found = []
    for inner in walk(body):
        if inner.type in ("return_statement", "return_expression") and not any(
                up.type in functions for up in ancestors(inner) if up.start_byte > body.start_byte):
            for value in inner.named_children:
                found += value.named_children if value.type == "expression_list" else [value]
    last = body.named_children[-1] if tail and body.named_children else None
    return found + ([last] if last is not None and not last.type.endswith(("_statement", "_declaration", "_item"))
                    else [])


def _ignores(name: str, operand: str | None, body: Node | None, returns: list[Node]) -> str | None:
    if not returns:
        return None
    if operand is None or operand.startswith("_") or body is None or not any(
            inner.type == "identifier" and text_of(inner) == operand for inner in walk(body)):
        return f"`{name}` never reads the value it is compared with"
    if {text_of(value) for value in returns} == {"true"}:
        return f"`{name}` returns true whatever it is compared with"
    return None


def go(text: str, ids: frozenset[str] = frozenset()) -> list[Finding]:
    """Every construct of a Go file that knows it is judged (`ids`: the run's, code_tokens.place_ids)."""
    root = parse("go", text)
    found = list(_strings(root, _GO_FUNCTIONS, frozenset({"for_statement"}), _GO_PROBES, callers=_GO_CALLERS,
                          places=_GO_PLACES, ids=ids))
    found += _go_build_tags(root)
    for node in walk(root):
        if node.type == "call_expression":
            callee = text_of(node.child_by_field_name("function"))
            arguments = [text_of(a) for a in (node.child_by_field_name("arguments") or node).named_children]
            if callee in ("testing.Testing", "testing.Short", "testing.Verbose"):
                found.append(_finding(node, f"{PRESENCE} (`{callee}()`)"))
            elif callee in ("os.Exit", "syscall.Exit") and _in_init(node):
                found.append(_finding(node, f"{TOUCHES}: exits the process in `init()`"))
            elif re.search(r"\.(?:Dup2|Dup3|Close)$", callee) and (
                    callee.startswith(("os.Std", "syscall.", "unix.")) and (
                        callee.startswith("os.Std") or any(_STANDARD.match(a) for a in arguments))):
                found.append(_finding(node, f"{TOUCHES}: `{callee}` on a standard stream"))
        elif node.type == "assignment_statement":
            for target in (node.child_by_field_name("left") or node).named_children:
                if text_of(target) in ("os.Stdout", "os.Stderr"):
                    found.append(_finding(node, f"{TOUCHES}: replaces `{text_of(target)}`"))
        elif node.type == "method_declaration" and text_of(node.child_by_field_name("name")) in _GO_COMPARING:
            found += _go_method(node)
    return found


def _go_build_tags(root: Node) -> list[Finding]:
    """A build constraint on a tag of the project's own (`//go:build !prod`): `go test` builds without it, a
    release may build with it, so the file can be what only the tests get."""
    found = []
    for node in root.children:
        if node.type != "comment":
            continue
        text = text_of(node)
        if not text.startswith(("//go:build", "// +build")):
            continue
        tags = set(re.findall(r"[\w.]+", text.split("build", 1)[1]))
        own = sorted(tag for tag in tags if not (tag in _GO_PLATFORM_TAGS or tag.startswith(("go1.", "goexperiment."))))
        if own:
            found.append(_finding(node, f"{PRESENCE} (a build tag of the project's own: `{', '.join(own)}`)", node))
    return found


def _in_init(node: Node) -> bool:
    function = next((up for up in ancestors(node) if up.type in _GO_FUNCTIONS), None)
    return function is not None and function.type == "function_declaration" and text_of(
        function.child_by_field_name("name")) == "init"


def _go_method(node: Node) -> list[Finding]:
    parameters = node.child_by_field_name("parameters")
    first = next(iter(parameters.named_children), None) if parameters is not None else None
    operand = text_of(first.child_by_field_name("name")) if first is not None else None
    body = node.child_by_field_name("body")
    name = text_of(node.child_by_field_name("name"))
    why = _ignores(name, operand or None, body, _returns(body, _GO_FUNCTIONS, tail=False))
    return [_finding(node, f"{LIES}: {why}", node)] if why else []


def _attributes(item: Node) -> list[str]:
    """The attributes written just before a Rust item (`#[cfg(test)]`), normalized."""
    found = []
    sibling = item.prev_named_sibling
    while sibling is not None and sibling.type == "attribute_item":
        found.append(normal(text_of(sibling)).replace(" ", ""))
        sibling = sibling.prev_named_sibling
    return found


def _test_lines(root: Node) -> set[int]:
    """The lines of test modules (`#[cfg(test)]`, or named `tests`) and `#[test]` functions."""
    lines: set[int] = set()
    for node in walk(root):
        attributes = _attributes(node) if node.type in ("mod_item", "function_item") else []
        if (node.type == "mod_item" and (text_of(node.child_by_field_name("name")) in ("tests", "test")
                                        or "#[cfg(test)]" in attributes)) or (node.type == "function_item" and any(
                a.startswith(("#[test", "#[tokio::test")) for a in attributes)):
            lines.update(range(node.start_point[0] + 1, node.end_point[0] + 2))
            if node.prev_named_sibling is not None and node.prev_named_sibling.type == "attribute_item":
                lines.add(line_of(node.prev_named_sibling))
    return lines


def rust(text: str, ids: frozenset[str] = frozenset()) -> list[Finding]:
    """Every construct of a Rust file that knows it is judged (outside its test modules; `ids`: the run's,
    code_tokens.place_ids)."""
    root = parse("rust", text)
    found = list(_strings(root, _RUST_FUNCTIONS, _RUST_LOOPS, _RUST_PROBES, callers=_RUST_CALLERS,
                          places=_RUST_PLACES, ids=ids, compounds=_RUST_COMPOUNDS))
    for node in walk(root):
        if node.type == "macro_invocation" and text_of(node.child_by_field_name("macro")) == "cfg" and re.search(
                r"\b(?:test|debug_assertions)\b", text_of(node)):
            found.append(_finding(node, f"{PRESENCE} (`{normal(text_of(node))}`)", compounds=_RUST_COMPOUNDS))
        elif node.type == "attribute_item":
            found += _rust_attribute(node)
        elif node.type == "call_expression":
            callee = text_of(node.child_by_field_name("function"))
            arguments = [text_of(a) for a in (node.child_by_field_name("arguments") or node).named_children]
            if re.search(r"(?:^|::)(?:dup2|dup3|close)$", callee) and any(_STANDARD.match(a) for a in arguments):
                found.append(_finding(node, f"{TOUCHES}: `{callee}` on a standard stream", compounds=_RUST_COMPOUNDS))
        elif node.type == "impl_item" and re.match(r"(?:\w+::)*(?:PartialEq|PartialOrd|Ord)\b",
                                                   text_of(node.child_by_field_name("trait"))):
            found += _rust_impl(node)
    tests = _test_lines(root)
    return [finding for finding in found if finding.line not in tests]


def _rust_attribute(node: Node) -> list[Finding]:
    """`#[cfg(not(test))]` anywhere, `#[cfg(test)]` on code in a function or on an item that has a twin of the same
    name (a test-only version of product code), a ctor that exits, code run before `main`."""
    attribute = normal(text_of(node)).replace(" ", "")
    item = node.next_named_sibling
    while item is not None and item.type == "attribute_item":
        item = item.next_named_sibling
    if "not(test)" in attribute or "debug_assertions" in attribute:  # a test build is a debug build
        return [_finding(node, f"{PRESENCE} (`{attribute}`)", item or node)]
    if re.search(r"cfg\((?:all\(|any\()?test\b", attribute) and item is not None and item.type not in (
            "mod_item", "use_declaration") and (node.parent is None or node.parent.type == "block" or _twin(item)):
        return [_finding(node, f"{PRESENCE} (`{attribute}` on code that has another version)", item)]
    if attribute.startswith(("#[ctor", "#[ctor::ctor")) and item is not None and "exit(" in text_of(item):
        return [_finding(node, f"{TOUCHES}: a constructor that exits the process", item)]
    if ".init_array" in attribute or ".ctors" in attribute:
        return [_finding(node, f"{TOUCHES}: code that runs before `main` (`{attribute}`)", item or node)]
    return []


def _twin(item: Node) -> bool:
    name = text_of(item.child_by_field_name("name") or item.child_by_field_name("type"))
    siblings = item.parent.named_children if item.parent is not None else []
    return bool(name) and any(other.id != item.id and other.type == item.type and text_of(
        other.child_by_field_name("name") or other.child_by_field_name("type")) == name for other in siblings)


def _rust_impl(node: Node) -> list[Finding]:
    found = []
    for function in (node.child_by_field_name("body") or node).named_children:
        name = text_of(function.child_by_field_name("name"))
        if function.type != "function_item" or name not in _RUST_COMPARING:
            continue
        parameters = [p for p in (function.child_by_field_name("parameters") or function).named_children
                      if p.type == "parameter"]
        pattern = parameters[0].child_by_field_name("pattern") if parameters else None
        operand = text_of(pattern) if pattern is not None and pattern.type == "identifier" else None
        body = function.child_by_field_name("body")
        if (why := _ignores(name, operand, body, _returns(body, _RUST_FUNCTIONS, tail=True))) is not None:
            found.append(_finding(function, f"{LIES}: {why}", function))
    return found


C_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".ipp", ".inl")
_C_CONDITION = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef)\b(.*)$", re.MULTILINE)
_C_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_C_TEST_WORDS = frozenset({"TEST", "TESTS", "TESTING", "UNITTEST", "UNITTESTS", "GTEST", "DOCTEST", "CMOCKA",
                           "CRITERION", "MUNIT", "CUNIT", "CPPUTEST"})
"""A macro with one of these words (split at underscores) names a test build: `UNIT_TESTING`, `__TEST_H__` (a test
header's include guard: defined only where the test program includes it), `GTEST_API_`, `DOCTEST_CONFIG_...`."""


def c(text: str) -> list[Finding]:
    """Preprocessor conditions in C or C++ code that ask for a test build's macro: the code then compiles one way
    into the test program and another into the product."""
    found = []
    for condition in _C_CONDITION.finditer(text):
        expression = condition.group(1).split("//")[0].split("/*")[0]
        for name in dict.fromkeys(_C_NAME.findall(expression)):
            if name == "defined" or not _C_TEST_WORDS.intersection(filter(None, name.upper().split("_"))):
                continue
            found.append(Finding(text.count("\n", 0, condition.start()) + 1,
                                 f"{PRESENCE}: the preprocessor asks for `{name}`, a macro only a test build defines",
                                 f"c-macro:{name}"))
    return found
