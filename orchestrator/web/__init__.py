"""The page on a run (`autobuild ui`, issue 41): a local web view of every feature, its tasks and their turns, live,
with answers and steering notes from it; safe by default, on loopback too.

It reads a run only through the store's inspection readers and changes one only through the paths its commands take.

guard.py: the door: the launch's token as a cookie, the Host and Origin checks, the Content-Security-Policy.
app.py: the routes on Starlette, rendered from our own Jinja2 templates with our own CSS and script.
reading.py: what each page shows, read through the inspection readers `status`, `show` and `history` use; a task's
    log a page at a time.
live.py: the live parts as server-sent events: a task's event log from any id on, a feature's state as it changes.
diffs.py: a turn's diff, a page of files at a time, each cut at a cap, binary files named.
actions.py: a note into the steering queue, an answer as `autobuild answer` itself (the first answer wins).
served.py: the page on a worker (`autobuild serve`, `/ui`): the served runs, each one's pages by its thread.
serving.py: the server itself: uvicorn on the bound address, and what is missing when the `ui` extra is not installed.
"""
