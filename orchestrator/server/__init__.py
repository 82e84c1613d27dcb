"""Workers and their clients: `autobuild serve` runs the `autobuild` graph on Aegra (the LangGraph Server API over
Postgres + Redis); `submit` and `--server` reach it through langgraph-sdk.

worker.py: `autobuild serve`: one worker of the engine (Aegra) in this process.
app.py: the worker's own routes beside the LangGraph Server API: `GET /ok`, pending questions, the page.
page.py: the page on the served runs at `/ui`, behind the worker's own token.
guard.py: in front of every route: a body size limit, a JSON depth limit, no NUL in a JSON body.
auth.py: bearer-token authentication for a worker that listens beyond loopback.
client.py: a typed client of the workers: queue a feature run, find its thread.
plan_at_base.py: the plan a `file://` repository holds on its base, checked as `run` checks it, before `submit`.
waker.py: re-queues the served runs that gave their slot back during a long pause.
"""
