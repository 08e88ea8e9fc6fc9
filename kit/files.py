"""The data directory and its files are private to the service's user: 0700 and 0600.

They hold every secret at rest (the database, the queue, the generated secret key), so nobody
else on the machine reads them, whatever the umask. SQLite creates a database's `-wal`, `-shm` and
`-journal` files with the permissions of the database file itself, so a database file made 0600
before SQLite opens it keeps its companions private too.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def private_dir(path: Path, *, tighten: bool) -> None:
    """Create `path` 0700 when it is missing. `tighten`: also take group and other permissions away
    from an existing one (the data directory; not the parent of a file the operator placed elsewhere)."""
    if not path.exists():
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        _restrict(path, DIR_MODE)  # mkdir's mode passes through the umask, which may add nothing
    elif tighten:
        _restrict(path, DIR_MODE)


def private_file(path: Path) -> None:
    """Make `path` exist, 0600, before anything writes to it; tighten it and its SQLite companions."""
    private_dir(path.parent, tighten=False)
    # Only a missing file is opened: closing any descriptor of a SQLite file drops every POSIX lock
    # this process holds on it through its connections (SQLite's "posix advisory locks" caveat).
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    for candidate in (path, *(Path(str(path) + suffix) for suffix in SQLITE_COMPANIONS)):
        _restrict(candidate, FILE_MODE)


def _restrict(path: Path, allowed: int) -> None:
    try:
        info = path.stat()
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid == os.getuid() and mode & ~allowed:
            os.chmod(path, mode & allowed)
    except FileNotFoundError:
        pass
