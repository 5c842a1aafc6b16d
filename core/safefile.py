"""Looking at user-supplied files without trusting them: candidate and task files come from users
and generated corpora, and a FIFO, a directory, a device file or a symlink loop in their place must
give a one-line reason, not a hang or a traceback."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MAX_CANDIDATE_BYTES = 4 * 2**20  # a generated kernel is kilobytes; anything this big is not one


def file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a candidate file, found with ``stat`` alone (a FIFO would block a read;
    a directory, a device or a symlink loop is not a source file), or None."""
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{path}: symlink loop"
        if exc.errno == errno.ENOENT:
            return f"{path}: broken symlink" if os.path.islink(path) else f"{path}: does not exist"
        if exc.errno == errno.ENAMETOOLONG:
            return f"{path}: name too long"
        return f"{path}: cannot read ({exc.strerror})"
    if stat.S_ISDIR(st.st_mode):
        return f"{path}: is a directory, not a candidate file"
    if not stat.S_ISREG(st.st_mode):
        kind = "FIFO" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode) else "device file"
        return f"{path}: is a {kind}, not a regular file"
    if st.st_size > MAX_CANDIDATE_BYTES:
        return f"{path}: {st.st_size} bytes, over the {MAX_CANDIDATE_BYTES // 2**20} MiB limit for a candidate file"
    if not os.access(path, os.R_OK):
        return f"{path}: not readable"
    return None
