"""The page on a run (issue 41, items 1 and 3), in-process with Starlette's TestClient: the launch's token becomes a
cookie, a foreign Host or Origin is refused, the CSP allows no inline script, hostile text is escaped, every number
equals `status --json`'s, a note is checked as `steer` checks it, the first answer wins, the live log resumes."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import sys
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from agents import PlayerInput
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from orchestrator.cli.main import main
from orchestrator.events import event_dict
from orchestrator.graph import runner
from orchestrator.graph.steering import NOTE_PREFIX
from orchestrator.repo.lock import lock_path
from orchestrator.settings import RunSettings
from orchestrator.store import event_log, run_options
from orchestrator.store import traces as trace
from orchestrator.store.locations import remember_db
from orchestrator.store.steering import SteeringQueue
from orchestrator.web.actions import Answers, Refusal
from orchestrator.web.app import create_app
from orchestrator.web.guard import Door
from orchestrator.web.reading import Where
from tests.graph.harness import CALC_FILES, plan, task
from tests.graph.test_one_truth import SUB, failing_second, run, three_tasks

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
TOKEN = "launch-token-for-the-test"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def client(repo: Path, db: Path, answers: Answers | None = None) -> TestClient:
    """A browser that opened the printed address: it holds the cookie."""
    where = Where(repo, str(db))
    browser = TestClient(create_app(where, Door(TOKEN, "127.0.0.1", PORT), answers), base_url=BASE)
    assert browser.get(f"/?token={TOKEN}").status_code == 200
    return browser


def post(browser: TestClient, path: str, data: dict[str, str], **headers: str) -> Any:
    return browser.post(path, data=data, headers={"origin": BASE, "accept": "application/json", **headers})


class Cells(HTMLParser):
    """Each `data-task` element's `data-field` texts, and every <script>'s attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, dict[str, str]] = {}
        self.scripts: list[dict[str, str | None]] = []
        self._task: str | None = None
        self._field: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script":
            self.scripts.append(found)
        if found.get("data-task"):
            self._task = found["data-task"]
        if found.get("data-field"):
            self._field = found["data-field"]

    def handle_endtag(self, tag: str) -> None:
        self._field = None

    def handle_data(self, data: str) -> None:
        if self._field and self._task:
            self.rows.setdefault(self._task, {})[self._field] = data.strip()
        elif self._field:
            self.rows.setdefault("", {})[self._field] = data.strip()
        self._field = None


def cells(page: str) -> Cells:
    parsed = Cells()
    parsed.feed(page)
    return parsed


def status_json(repo: Path, db: Path, capsys: pytest.CaptureFixture[str], *feature: str) -> Any:
    capsys.readouterr()
    assert main(["status", *feature, "--repo", str(repo), "--db", str(db), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A finished run, read by every test that only reads: TASK-001 approved, TASK-002 failed, TASK-004 skipped."""
    root = tmp_path_factory.mktemp("finished")
    repo, db = three_tasks(root), root / "db.sqlite"
    asyncio.run(run(repo, db, "FEAT-001", failing_second()))
    return repo, db


@pytest.fixture(scope="module")
def waiting(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run stopped at TASK-1's question."""
    return asyncio.run(asked(tmp_path_factory.mktemp("waiting")))


def test_the_token_becomes_a_cookie_and_foreign_hosts_and_origins_are_refused(finished: tuple[Path, Path]) -> None:
    repo, db = finished
    app = create_app(Where(repo, str(db)), Door(TOKEN, "127.0.0.1", PORT))
    stranger = TestClient(app, base_url=BASE)
    assert stranger.get("/").status_code == 401
    assert stranger.get("/static/ui.js").status_code == 401, "nothing opens without the token, files neither"
    assert stranger.get("/?token=guessed").status_code == 401
    welcome = stranger.get(f"/?token={TOKEN}", follow_redirects=False)
    assert welcome.status_code == 303 and welcome.headers["location"] == "/", "the token leaves the address bar"
    cookie = welcome.headers["set-cookie"]
    assert f"autobuild_ui_{PORT}={TOKEN}" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie

    browser = client(repo, db)
    page = browser.get("/f/FEAT-001")
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    script_src = next(part for part in csp.split(";") if part.strip().startswith("script-src"))
    assert script_src.split() == ["script-src", "'self'"] and "default-src 'none'" in csp
    assert "http" not in csp, "no other origin"
    assert all(script.get("src", "").startswith("/static/") for script in cells(page.text).scripts)
    assert "<script>" not in page.text and not re.search(r"<[^>]*\son\w+\s*=", page.text), "no inline script"

    elsewhere = stranger.get(f"//evil.example/?token={TOKEN}", follow_redirects=False)
    assert elsewhere.headers["location"] == "/", "the welcome never sends the browser to another site"
    assert browser.get("/", headers={"host": f"evil.example:{PORT}"}).status_code == 421, "DNS rebinding"
    assert browser.get("/", headers={"host": f"localhost:{PORT}"}).status_code == 200
    note = {"text": "use the retry helper"}
    assert post(browser, "/f/FEAT-001/t/TASK-002/note", note, origin="http://evil.example").status_code == 403
    no_origin = browser.post("/f/FEAT-001/t/TASK-002/note", data=note)
    assert no_origin.status_code == 403 and "own origin" in no_origin.text
    assert TOKEN not in page.text and TOKEN not in browser.get("/").text, "the token is never in a page"


QUESTION = "Which store should sessions use?"


async def asked(tmp_path: Path) -> tuple[Path, Path]:
    """A run stopped at TASK-1's question (no terminal: it waits for `autobuild answer`); TASK-2 approved."""
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1"), task("TASK-2")))
    agents = ScriptedAgents({("player", "TASK-1"): writes(SUB, question=QUESTION, options=["Postgres", "SQLite"]),
                             ("player", "TASK-2"): writes(SUB), "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), agents=agents,
                           interactive=True, replan=0)
    summary = await runner.execute(runner.prepare(settings), lambda event: None)
    assert [q["question"] for q in summary.pending_questions] == [QUESTION]
    return repo, tmp_path / "db.sqlite"


def feature_page_is_status_json_s(repo: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    """Every number and state on the feature page is `status --json`'s (its table, returned)."""
    table = status_json(repo, db, capsys, "FEAT-001")
    shown = cells(client(repo, db).get("/f/FEAT-001").text).rows
    assert shown.pop("")["feature-cost"] == f"${table['cost_usd']:.4f}"
    assert shown == {row["task"]: {"status": row["status"], "turn": str(row["turn"]),
                                   "cost_usd": f"${row['cost_usd']:.4f}"}
                     | ({"cause": row["cause"]} if row["cause"] else {}) for row in table["tasks"]}
    return table


def test_every_number_on_the_pages_is_status_json_s(finished: tuple[Path, Path],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = finished
    browser = client(repo, db)
    table = feature_page_is_status_json_s(repo, db, capsys)
    listed = status_json(repo, db, capsys)
    runs = cells(browser.get("/").text)
    row = next(r for r in listed if r["thread"] == "FEAT-001")
    page = browser.get("/").text
    assert f"${row['cost_usd']:.4f}" in page and runs is not None
    done = sum(1 for task_row in table["tasks"] if task_row["status"].startswith("approved"))
    assert f">{done}/{len(table['tasks'])}<" in page, page
    for task_row in table["tasks"]:
        task_page = cells(browser.get(f"/f/FEAT-001/t/{task_row['task']}").text).rows[task_row["task"]]
        assert task_page["status"] == task_row["status"] and task_page["turn"] == str(task_row["turn"])
        assert task_page["cost_usd"] == f"${task_row['cost_usd']:.4f}"


async def test_hostile_plan_text_diffs_and_file_names_are_escaped(tmp_path: Path) -> None:
    name = 'x"><svg onload=alert(1)>.py'
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES,
                            plan=plan(task("TASK-001", name=HOSTILE, requirements=[HOSTILE])))
    db = tmp_path / "db.sqlite"

    def binary(worktree: Path) -> None:
        (worktree / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + HOSTILE.encode())

    agents = ScriptedAgents({"player": writes({**SUB, name: f"# {HOSTILE}\n"}, notes=HOSTILE, effect=binary),
                             "coach": approve(rationale=HOSTILE)})
    assert (await run(repo, db, "FEAT-001", agents)).results["TASK-001"]["status"] == "approved"
    browser = client(repo, db)
    pages = [browser.get("/f/FEAT-001").text, browser.get("/f/FEAT-001/t/TASK-001").text]
    pages.append(browser.get("/f/FEAT-001/t/TASK-001/diff?turn=1&attempt=").text)
    for page in pages:
        assert "<script>alert" not in page and "<img src=x" not in page and "<svg onload" not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in pages[1], "shown, as text"
    diff = pages[2]
    assert "x&#34;&gt;&lt;svg onload=alert(1)&gt;.py" in diff and "+# &lt;script&gt;" in diff
    assert "logo.png" in diff and "binary file, not shown" in diff and "PNG" not in diff.split("logo.png", 1)[1]


def test_a_note_is_checked_as_steer_checks_it(waiting: tuple[Path, Path]) -> None:
    repo, db = waiting
    browser = client(repo, db)
    empty = post(browser, "/f/FEAT-001/t/TASK-1/note", {"text": "  "})
    assert empty.status_code == 400 and "the note is empty" in empty.json()["message"]
    large = post(browser, "/f/FEAT-001/t/TASK-1/note", {"text": "x" * (8 * 1024 + 1)})
    assert large.status_code == 400 and "over the 8 KB" in large.json()["message"]
    finished = post(browser, "/f/FEAT-001/t/TASK-2/note", {"text": "hello"})
    assert finished.status_code == 409 and "has finished (approved)" in finished.json()["message"]
    assert post(browser, "/f/FEAT-001/t/TASK-9/note", {"text": "hello"}).status_code == 404
    taken = post(browser, "/f/FEAT-001/t/TASK-1/note", {"text": "use the existing retry helper"})
    assert taken.status_code == 202 and taken.json()["message"].startswith("note 1 accepted"), taken.text
    plain = browser.post("/f/FEAT-001/t/TASK-1/note", data={"text": ""}, headers={"origin": BASE})
    assert plain.status_code == 400 and "the note is empty" in plain.text, "a plain form gets a page"


def test_the_first_answer_wins_and_goes_the_way_autobuild_answer_goes(waiting: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:
    repo, db = waiting
    said = tmp_path / "argv.json"
    done = tmp_path / "done"
    # `autobuild answer`'s process as the page starts it: it takes the repository's lock (its file names it) and
    # goes on until the test is done with it (at most a minute: a broken test fails, never hangs)
    fake = tmp_path / "autobuild_answer.py"
    fake.write_text(f"""import json, os, pathlib, sys, time
open({str(said)!r}, "a").write(json.dumps(sys.argv[1:]) + "\\n")
pathlib.Path({str(lock_path(repo))!r}).write_text(json.dumps({{"pid": os.getpid()}}))
for _ in range(600):
    if pathlib.Path({str(done)!r}).exists():
        break
    time.sleep(0.1)
""")
    answers = Answers(Where(repo, str(db)), (sys.executable, str(fake)))
    browser = client(repo, db, answers)
    page = browser.get("/f/FEAT-001").text
    question_id = re.search(r'name="question_id" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    assert QUESTION in page and ">SQLite</button>" in page
    with ThreadPoolExecutor(2) as pool:
        given = list(pool.map(lambda text: _answer(answers, question_id, text), ["SQLite", "Postgres"]))
    assert sorted(given) == ["already answered", "taken"], given
    argv = [json.loads(line) for line in said.read_text().splitlines()]
    assert len(argv) == 1 and argv[0][:3] == ["answer", "FEAT-001", question_id]
    assert argv[0][4:] == ["--repo", str(repo), "--interactive", "--from", "page", "--db", str(db)]
    again = post(browser, "/f/FEAT-001/answer", {"question_id": question_id, "option": "SQLite"})
    assert again.status_code == 409 and again.json()["message"] == f"{question_id} was already answered"
    unknown = post(browser, "/f/FEAT-001/answer", {"question_id": "TASK-1-000000", "text": "yes"})
    assert unknown.status_code == 404
    done.write_text("")
    for proc in answers.started.values():
        proc.wait(timeout=60)


def _answer(answers: Answers, question_id: str, text: str) -> str:
    try:
        answers.answer("FEAT-001", question_id, text)
    except Refusal as refused:
        return "already answered" if "already answered" in str(refused) else str(refused)
    return "taken"


def test_the_live_log_resumes_after_the_last_id_seen(finished: tuple[Path, Path]) -> None:
    repo, db = finished
    events = event_log.task_events(repo, "FEAT-001", "TASK-001")
    browser = client(repo, db)
    seen = events[len(events) // 2].id
    with browser.stream("GET", "/f/FEAT-001/t/TASK-001/log", headers={"last-event-id": str(seen)}) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        text = "".join(stream.iter_text())
    ids = [int(found) for found in re.findall(r"^id: (\d+)", text, re.MULTILINE)]
    assert ids == [e.id for e in events if e.id > seen] and ids, text
    assert "event: end" in text
    with browser.stream("GET", "/f/FEAT-001/t/TASK-001/log?since=0") as stream:
        assert len(re.findall(r"^id: ", "".join(stream.iter_text()), re.MULTILINE)) == len(events)
    assert browser.get("/f/FEAT-001/t/TASK-404/log").status_code == 404, "no stream that waits forever"
    assert browser.get("/f/FEAT-404/live").status_code == 404


def test_a_bad_port_or_store_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001")))
    capsys.readouterr()
    assert main(["ui", "--repo", str(repo), "--port", "70000"]) == 2
    assert capsys.readouterr().err.strip() == "error: --port 70000 is not a port: give 1-65535, or leave it out for" \
                                              " a free one"
    assert main(["ui", "--repo", str(repo), "--db", "ftp://example/db"]) == 2
    said = capsys.readouterr()
    assert said.err.startswith("error: unsupported --db scheme ftp://") and said.out == "", "nothing served"


async def test_a_note_sent_from_the_page_reaches_the_player_s_next_turn(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001")))
    db = tmp_path / "db.sqlite"
    browser: list[TestClient] = []
    said: list[Any] = []

    def coach(data: object) -> Turn:
        if getattr(data, "turn", 0) == 1:  # while turn 1 is judged, the person sends a note from the page
            browser.append(browser[0] if browser else client(repo, db))
            said.append(post(browser[0], "/f/FEAT-001/t/TASK-001/note", {"text": "use the existing helper"}))
        return feedback(("calc/sub.py", None, "missing")) if getattr(data, "turn", 0) == 1 else approve()

    agents = ScriptedAgents({("player", "TASK-001"): writes(SUB), ("coach", "TASK-001"): coach})
    remember_db(repo, "FEAT-001", str(db))  # as `autobuild run --db` does: the run's notes are read from there
    assert (await run(repo, db, "FEAT-001", agents, max_turns=3)).results["TASK-001"]["status"] == "approved"
    assert said[0].status_code == 202, said[0].text
    players = [call for call in agents.prompts_of("player", "TASK-001") if isinstance(call, PlayerInput)]
    assert [p.supervisor_notes for p in players] == [[], [NOTE_PREFIX + "use the existing helper"]]


async def test_a_note_from_the_page_goes_to_the_attempt_it_names(tmp_path: Path) -> None:
    repo, db = await asked(tmp_path)
    run_options.record(repo, "FEAT-001", {"attempts": 2})  # as `autobuild run --attempts 2` leaves it
    browser = client(repo, db)
    page = browser.get("/f/FEAT-001/t/TASK-1").text
    assert '<option value="a2">attempt a2 only</option>' in page and '<option value="">every' in page
    named = post(browser, "/f/FEAT-001/t/TASK-1/note", {"text": "only you", "attempt": "a2"})
    assert named.status_code == 202 and "attempt a2 of TASK-1" in named.json()["message"], named.text
    every = post(browser, "/f/FEAT-001/t/TASK-1/note", {"text": "all of you", "attempt": ""})
    assert every.status_code == 202, every.text
    beyond = post(browser, "/f/FEAT-001/t/TASK-1/note", {"text": "nobody", "attempt": "a3"})
    assert beyond.status_code == 400 and "names no attempt" in beyond.json()["message"]
    queue = SteeringQueue(db)
    assert [(n.text, n.attempt, n.source) for n in queue.all_notes("FEAT-001", "TASK-1")] == [
        ("only you", 2, "page"), ("all of you", None, "page")]


def test_a_long_log_is_followed_from_its_last_page_and_paged_through(tmp_path: Path) -> None:
    repo, db = asyncio.run(asked(tmp_path))
    written = len(event_log.task_events(repo, "FEAT-001", "TASK-2"))
    for number in range(450):
        trace.append(repo, "FEAT-001", "TASK-2", event_dict("note_accepted", feature="FEAT-001", task="TASK-2",
                                                            note=number, text=f"{HOSTILE} {number}", source="cli"))
    events = event_log.task_events(repo, "FEAT-001", "TASK-2")
    browser = client(repo, db)
    page = browser.get("/f/FEAT-001/t/TASK-2").text
    since = int(re.search(r'data-log="/f/FEAT-001/t/TASK-2/log\?since=(\d+)"', page).group(1))  # type: ignore[union-attr]
    assert since == events[-201].id and f"{len(events) - 200} earlier event(s)" in page
    with browser.stream("GET", f"/f/FEAT-001/t/TASK-2/log?since={since}") as stream:
        assert len(re.findall(r"^id: ", "".join(stream.iter_text()), re.MULTILINE)) == 200, "the last page, live"
    last = browser.get("/f/FEAT-001/t/TASK-2/events").text
    pages = -(-(written + 450) // 200)
    assert f"page {pages} of {pages}" in last and "Earlier events" in last and "Later events" not in last
    assert "<script>alert" not in last and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in last
    first = browser.get("/f/FEAT-001/t/TASK-2/events?page=0").text
    assert first.count("<li ") == 200 and f'data-id="{events[0].id}"' in first and "Later events" in first
    assert browser.get("/f/FEAT-001/t/TASK-9/events").status_code == 404


def test_a_run_stopped_at_a_question_is_shown_waiting_not_in_progress(waiting: tuple[Path, Path]) -> None:
    repo, db = waiting
    browser = client(repo, db)
    listed = browser.get("/").text
    assert '<span class="badge blocked" data-field="state">waiting for an answer</span>' in listed, listed
    assert 'id="run-state">waiting for an answer</span>' in browser.get("/f/FEAT-001").text


def test_a_store_that_cant_be_read_now_is_said_not_a_server_error(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1")))
    db = tmp_path / "db.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + b"damaged" * 200)
    browser = TestClient(create_app(Where(repo, str(db)), Door(TOKEN, "127.0.0.1", PORT)), base_url=BASE)
    assert browser.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    for path in ("/", "/f/FEAT-001", "/f/FEAT-001/t/TASK-1"):
        page = browser.get(path)
        assert page.status_code == 503 and "checkpoint DB" in page.text and "Traceback" not in page.text, path
    note = post(browser, "/f/FEAT-001/t/TASK-1/note", {"text": "hello"})
    assert note.status_code == 503 and note.json()["message"].startswith("checkpoint DB"), note.text


def test_a_store_in_its_first_moment_reads_as_one_that_is_not_there_yet(tmp_path: Path) -> None:
    """A run's store in its first moment (the file made, no table in it yet): as before the file existed."""
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1")))
    starting = sqlite3.connect(tmp_path / "first.sqlite")
    starting.execute("PRAGMA journal_mode=wal")
    starting.close()
    said = {}
    for name in ("missing", "first"):
        browser = client(repo, tmp_path / f"{name}.sqlite")
        codes = [browser.get(path).status_code for path in ("/", "/f/FEAT-001", "/f/FEAT-001/t/TASK-1")]
        note = post(browser, "/f/FEAT-001/t/TASK-1/note", {"text": "hello"})
        said[name] = (codes, note.status_code, note.json()["message"].replace(f"{name}.sqlite", "DB"))
    assert said["first"] == said["missing"] and said["first"][1] == 409, said
