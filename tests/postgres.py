"""A throwaway PostgreSQL server on 127.0.0.1 for tests (Debian's postgresql package; see `make install`)."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)),
                                       None)
    if found is None:
        raise RuntimeError(f"PostgreSQL's {name} is missing: run `make install` (it installs Debian's postgresql)")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server, yield its URL, stop it and delete its data."""
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    folder = Path(tempfile.mkdtemp(prefix="autobuild-pg-"))
    folder.chmod(0o755)
    if as_root:
        pw = pwd.getpwnam("postgres")
        os.chown(folder, pw.pw_uid, pw.pw_gid)
    data, port = folder / "data", _free_port()
    user = "postgres" if as_root else pwd.getpwuid(os.getuid()).pw_name
    try:
        subprocess.run([*prefix, _bin("initdb"), "-D", str(data), "-A", "trust", "-U", user],
                       check=True, capture_output=True)
        subprocess.run([*prefix, _bin("pg_ctl"), "-D", str(data), "-l", str(folder / "log"), "-w", "start", "-o",
                        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"],
                       check=True, capture_output=True)
        subprocess.run([*prefix, _bin("createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", user, "autobuild"],
                       check=True, capture_output=True)
        yield f"postgresql://{user}@127.0.0.1:{port}/autobuild"
    finally:
        subprocess.run([*prefix, _bin("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, check=False)
        shutil.rmtree(folder, ignore_errors=True)
