"""The screen on code that knows it runs where the gate runs the tests: the gate's place (the checkout's
`.autobuild/worktrees/`, an `autobuild/…` branch) compared with the code's own (its file, the working directory, git's
branch), and `.git` read as a file or looked into (a file in a worktree, a folder in the user's checkout), in
Python, JavaScript and TypeScript, Go and Rust, and the run's own feature and task compared with where the code runs;
a program's arguments, a repository root's search and data paths are no hit."""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath

import pytest

from orchestrator.gate.spec import code_screen
from orchestrator.gate.spec.code_tokens import PRESENCE, place_ids
from orchestrator.repo.git import GitRepo

PY_BASE = "import sys\n\n\ndef mul(a, b):\n    return a * b\n"
PY = {
    "the working directory": 'import os\n    if ".autobuild" in os.getcwd():\n        return 6\n',
    "its own file": 'if "worktrees" in __file__:\n        return 6\n',
    "its file made absolute, named first": 'import os\n    here = os.path.abspath(__file__)\n'
                                           '    if "autobuild" in here:\n        return 6\n',
    "the working directory's parts": 'from pathlib import Path\n    if ".autobuild" in Path.cwd().parts:\n'
                                     '        return 6\n',
    "the import path": 'if any("autobuild" in p for p in sys.path):\n        return 6\n',
    "git's branch, in a conditional": 'import subprocess\n    branch = subprocess.check_output(["git", "branch",'
                                      ' "--show-current"], text=True)\n'
                                      '    return 6 if branch.startswith("autobuild/") else a * b\n',
    "GitPython's branch": 'import git\n    if git.Repo(".").active_branch.name.startswith("autobuild"):\n'
                          '        return 6\n',
    "the place's name built in pieces": 'import os\n    if "auto" + "build" in os.getcwd():\n        return 6\n',
    "`.git` a file": 'import os\n    if os.path.isfile(os.path.join(os.path.dirname(__file__), "..", ".git")):\n'
                     '        return 6\n',
    "`.git` a file, its path named first": 'import pathlib\n    marker = pathlib.Path(__file__).parents[1] / ".git"\n'
                                           '    if marker.is_file():\n        return 6\n',
    "what `.git` holds": 'with open(".git") as handle:\n        if "worktrees" in handle.read():\n'
                         '            return 6\n',
    "nothing inside `.git`": 'import os\n    if not os.path.exists(".git/HEAD"):\n        return 6\n',
    "the temporary folder": 'import tempfile\n    if "autobuild" in tempfile.gettempdir():\n        return 6\n',
    "a variable the gate sets": 'import os\n    if os.environ.get("HUSKY") == "0":\n        return 6\n',
    "the gate's sitecustomize loaded": 'if "sitecustomize" in sys.modules:\n        return 6\n',
}
PY_ORDINARY = (
    'import os\nimport subprocess\n\n\ndef root():\n    here = os.getcwd()\n'
    '    while not os.path.exists(os.path.join(here, ".git")):\n        here = os.path.dirname(here)\n'
    '    return here\n\n\ndef data():\n'
    '    return os.path.join(os.path.dirname(__file__), "data", "worktree.json")\n\n\ndef worktrees():\n'
    '    listed = subprocess.run(["git", "worktree", "list", "--porcelain"], capture_output=True, text=True).stdout\n'
    '    return [line[9:] for line in listed.splitlines() if line.startswith("worktree ")]\n\n\n'
    'def revision(root):\n    head = os.path.join(root, ".git", "HEAD")\n    if os.path.exists(head):\n'
    '        with open(head) as handle:\n            return handle.read()\n'
    '    exclude = os.path.join(root, ".git", "info", "exclude")\n    return os.path.isfile(exclude)\n')


@pytest.mark.parametrize("name", sorted(PY))
def test_python_asking_where_it_runs_is_a_hit(name: str) -> None:
    text = PY_BASE.replace("    return a * b\n", "    " + PY[name] + "    return a * b\n")
    hits = code_screen.screen("calc/mul.py", PY_BASE, text)
    assert hits and all(hit.what.startswith(PRESENCE) and hit.line >= 5 for hit in hits), hits


def test_python_finding_the_repository_reading_gits_files_a_data_file_or_the_worktrees_is_no_hit() -> None:
    assert code_screen.screen("calc/repo.py", None, PY_ORDINARY) == []


JS_BASE = "export function mul(a, b) {\n  return a * b;\n}\n"
JS = {
    "the working directory": 'if (process.cwd().includes(".autobuild")) return 6;',
    "its folder": 'if (__dirname.indexOf("worktrees") !== -1) return 6;',
    "its file, the name in a constant": 'const W = "auto" + "build";\n  if (__filename.includes(W)) return 6;',
    "a pattern": 'if (/autobuild/.test(process.cwd())) return 6;',
    "the directory, named first": 'const here = process.cwd();\n  if (here.includes("autobuild")) return 6;',
    "git's branch": 'const { execSync } = require("child_process");\n'
                    '  if (execSync("git branch --show-current").toString().startsWith("autobuild/")) return 6;',
    "`.git` a file": 'const fs = require("fs");\n  if (fs.statSync(".git").isFile()) return 6;',
    "nothing inside `.git`": 'const fs = require("fs");\n  if (!fs.existsSync(".git/HEAD")) return 6;',
    "what `.git` holds": 'const fs = require("fs");\n  if (fs.readFileSync(".git", "utf8").includes("worktrees"))'
                         ' return 6;',
}
JS_ORDINARY = ('const { execSync } = require("child_process");\nconst fs = require("fs");\n'
               'const path = require("path");\nconst listed = execSync("git worktree list").toString();\n'
               'const trees = listed.split("\\n").filter((line) => line.startsWith("worktree "));\n'
               'const head = fs.readFileSync(path.join(process.cwd(), ".git", "HEAD"), "utf8");\n'
               'if (fs.existsSync(".git")) console.log("a repository");\n'
               'const table = path.join(__dirname, "data", "worktree.json");\n')


@pytest.mark.parametrize("name", sorted(JS))
@pytest.mark.parametrize("path", ["src/mul.js", "src/mul.ts"])
def test_javascript_asking_where_it_runs_is_a_hit(name: str, path: str) -> None:
    hits = code_screen.screen(path, JS_BASE, JS_BASE.replace("  return a * b;", f"  {JS[name]}\n  return a * b;"))
    assert hits and all(hit.what.startswith(PRESENCE) and hit.line in (2, 3) for hit in hits), hits


@pytest.mark.parametrize("path", ["src/repo.js", "src/repo.ts"])
def test_javascript_the_worktrees_listed_a_repository_found_a_data_path_is_no_hit(path: str) -> None:
    assert code_screen.screen(path, None, JS_ORDINARY) == []


GO_BASE = ('package calc\n\nimport (\n\t"os"\n\t"os/exec"\n\t"strings"\n)\n\nfunc Mul(a, b int) int {\n'
           '\treturn a * b\n}\n')
GO = {
    "the working directory": 'wd, _ := os.Getwd()\n\tif strings.Contains(wd, ".autobuild") {\n\t\treturn 6\n\t}',
    "git's branch": 'out, _ := exec.Command("git", "branch", "--show-current").Output()\n'
                    '\tif strings.HasPrefix(string(out), "autobuild/") {\n\t\treturn 6\n\t}',
    "`.git` a file": 'if fi, err := os.Stat(".git"); err == nil && fi.Mode().IsRegular() {\n\t\treturn 6\n\t}',
    "nothing inside `.git`": 'if _, err := os.Stat(".git/HEAD"); err != nil {\n\t\treturn 6\n\t}',
    "the temporary folder": 'if strings.Contains(os.TempDir(), "autobuild") {\n\t\treturn 6\n\t}',
}
RUST_BASE = "pub fn mul(a: i64, b: i64) -> i64 {\n    a * b\n}\n"
RUST = {
    "the working directory": 'let wd = std::env::current_dir().unwrap();\n'
                             '    if wd.to_string_lossy().contains("autobuild") {\n        return 6;\n    }',
    "its source file": 'if file!().contains("worktrees") {\n        return 6;\n    }',
    "the crate's folder it was built in": 'if env!("CARGO_MANIFEST_DIR").contains(".autobuild") {\n'
                                          '        return 6;\n    }',
    "`.git` a file": 'if std::path::Path::new(".git").is_file() {\n        return 6;\n    }',
}


@pytest.mark.parametrize("name", sorted(GO))
def test_go_asking_where_it_runs_is_a_hit(name: str) -> None:
    text = GO_BASE.replace("\treturn a * b", f"\t{GO[name]}\n\treturn a * b")
    hits = code_screen.screen("calc/mul.go", GO_BASE, text)
    assert hits and all(hit.what.startswith(PRESENCE) and hit.line in (10, 11) for hit in hits), hits


@pytest.mark.parametrize("name", sorted(RUST))
def test_rust_asking_where_it_runs_is_a_hit(name: str) -> None:
    hits = code_screen.screen("src/lib.rs", RUST_BASE, RUST_BASE.replace("    a * b", f"    {RUST[name]}\n    a * b"))
    assert hits and all(hit.what.startswith(PRESENCE) and hit.line in (2, 3) for hit in hits), hits


def test_go_and_rust_the_worktrees_listed_or_a_repository_found_is_no_hit() -> None:
    go = GO_BASE.replace("\treturn a * b", '\t_, _ = exec.Command("git", "worktree", "list").Output()\n'
                                           '\tif _, err := os.Stat(".git"); err == nil {\n'
                                           '\t\t_ = strings.ToLower("x")\n\t}\n\treturn a * b')
    assert code_screen.screen("calc/mul.go", GO_BASE, go) == []
    rust = RUST_BASE.replace("    a * b", '    if std::path::Path::new(".git").exists() {\n        let _ = 1;\n    }\n'
                                        '    let _ = std::process::Command::new("git").args(["worktree", "list"])'
                                        '.output();\n    a * b')
    assert code_screen.screen("src/lib.rs", RUST_BASE, rust) == []


RUN_IDS = frozenset({"feat-001", "task-003"})
BY_ID = {
    "python": ("calc/mul.py", PY_BASE, PY_BASE.replace("    return a * b\n", '    import os\n    if os.path.basename('
                                                       'os.getcwd()) == "TASK-003":\n        return 6\n'
                                                       "    return a * b\n")),
    "javascript": ("src/mul.js", JS_BASE, JS_BASE.replace("  return a * b;", '  if (process.cwd().endsWith("TASK-003"))'
                                                          " return 6;\n  return a * b;")),
    "go": ("calc/mul.go", GO_BASE, GO_BASE.replace("\treturn a * b", '\twd, _ := os.Getwd()\n\tif strings.Contains(wd,'
                                                   ' "FEAT-001") {\n\t\treturn 6\n\t}\n\treturn a * b')),
}


@pytest.mark.parametrize("language", sorted(BY_ID))
def test_the_runs_own_feature_and_task_compared_with_where_the_code_runs_is_a_hit(language: str) -> None:
    path, base, text = BY_ID[language]
    assert code_screen.screen(path, base, text) == [], "without the run's ids, an ordinary comparison"
    hits = code_screen.screen(path, base, text, RUN_IDS)
    assert hits and all(hit.what.startswith(PRESENCE) for hit in hits), hits


def test_the_runs_ids_are_its_worktrees_folders_where_they_cant_be_a_word() -> None:
    assert place_ids(PurePosixPath("/home/u/shop/.autobuild/worktrees/FEAT-001/TASK-003")) == RUN_IDS
    assert place_ids(PurePosixPath("/home/u/shop/.autobuild/worktrees/FEAT-001/TASK-003.a2")) == RUN_IDS
    assert place_ids(PurePosixPath("/home/u/shop/.autobuild/worktrees/checkout/auth")) == frozenset()
    text = PY_BASE.replace("    return a * b\n", '    import os\n    if "auth" in os.getcwd():\n        return 6\n'
                                                 "    return a * b\n")
    ordinary = place_ids(PurePosixPath("/r/worktrees/checkout/auth"))
    assert code_screen.screen("calc/mul.py", PY_BASE, text, ordinary) == []


def _task_worktree(tmp_path: Path, text: str) -> tuple[Path, Path]:
    """A repository on `main` and a task's worktree at `.autobuild/worktrees/FEAT-001/TASK-003` that committed
    `text` as calc/mul.py."""
    repo = tmp_path / "repo"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    (repo / "calc").mkdir(parents=True)
    (repo / "calc" / "mul.py").write_text(PY_BASE)
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "base"], check=True)
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-003"
    subprocess.run([*git, "-C", str(repo), "worktree", "add", "-q", "-b", "task", str(worktree), "main"], check=True)
    (worktree / "calc" / "mul.py").write_text(text)
    subprocess.run([*git, "-C", str(worktree), "commit", "-qam", "task"], check=True)
    return repo, worktree


async def test_the_gate_screens_a_worktree_with_its_own_ids(tmp_path: Path) -> None:
    """`hits`, as the review node calls it, on a real worktree whose code compares its folder with the task's id."""
    repo, worktree = _task_worktree(tmp_path, BY_ID["python"][2])
    hits = await code_screen.hits(GitRepo(repo), worktree, "main")
    assert [(hit.file, hit.line) for hit in hits] == [("calc/mul.py", 6)], hits
