"""`autobuild ui [--port N] [--open]`: the page on a run (orchestrator/web/), served on 127.0.0.1, its address with
this launch's token printed once."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import webbrowser
from typing import TYPE_CHECKING, TypeVar

from orchestrator.errors import InputError

if TYPE_CHECKING:  # the parser is built on every command: what the command needs is imported when it runs
    from orchestrator.settings import Settings

Parser = TypeVar("Parser", bound=argparse.ArgumentParser)
HOST = "127.0.0.1"


def add_ui_command(commands: argparse._SubParsersAction[Parser]) -> Parser:
    """The `ui` parser (its common options are added by the caller)."""
    ui = commands.add_parser("ui", help="a local web page on the runs: every feature, its tasks and their turns,"
                                        " live; answer questions and send notes from it")
    ui.add_argument("--port", type=int, default=0,
                    help="the port on 127.0.0.1 (default: a free one)")
    ui.add_argument("--open", action="store_true", help="open the page in the default browser")
    return ui


def _port(wanted: int) -> tuple[socket.socket, int]:
    """A listening socket on the loopback address (taken now: the printed address is the one that answers)."""
    if not 0 <= wanted <= 65535:
        raise InputError(f"--port {wanted} is not a port: give 1-65535, or leave it out for a free one")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, wanted))
    except OSError as exc:
        sock.close()
        raise InputError(f"port {wanted} on {HOST} can't be used ({exc.strerror}): pick another with --port"
                         ) from None
    return sock, int(sock.getsockname()[1])


def ui_command(args: argparse.Namespace, settings: Settings) -> int:
    from orchestrator.web.serving import check_installed

    check_installed()
    from orchestrator.store.checkpoints import CheckpointStore
    from orchestrator.web.app import create_app
    from orchestrator.web.guard import Door, new_token
    from orchestrator.web.reading import Where
    from orchestrator.web.serving import serve

    CheckpointStore.for_repo(settings.repo, settings.db).check()  # a bad --db: one line, before anything listens
    sock, port = _port(int(args.port))
    sock.close()  # uvicorn binds it again at once (SO_REUSEADDR)
    door = Door(new_token(), HOST, port)
    app = create_app(Where(settings.repo, settings.db), door)
    url = door.url()
    print(f"AutoBuild's page on {settings.repo}: {url}", flush=True)
    print("  (the address carries this launch's token: keep it to yourself; Ctrl+C stops the page, not the runs)",
          flush=True)
    if args.open:
        webbrowser.open(url)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C: the page stops; the runs it started go on
        asyncio.run(serve(app, HOST, port))
    return 0
