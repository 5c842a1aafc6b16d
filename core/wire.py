"""Messages between mkbench's processes.

Whatever comes out of a process that has run candidate code is untrusted: a candidate can write
anything to its worker's pipe. Plain ``pickle.loads`` of such bytes would let it run code in the
orchestrator (a pickle can name any importable callable). Every message read from a worker is
therefore unpickled with class lookup refused: only dict, list, tuple, set, str, bytes, int, float,
bool and None come through, which is all the protocol uses (tensors travel as descriptors: see
:mod:`mkbench.transfer`). Size is capped so a flood cannot exhaust the orchestrator's memory.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

#: the largest message accepted from a worker; a timing or trace summary is a few kilobytes
MAX_MESSAGE_BYTES = 16 * 2**20


class WireError(Exception):
    """An unreadable, oversized or non-plain message: the sender broke the protocol."""


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        raise WireError(f"message refers to {module}.{name}: only plain data is accepted")


def dumps(obj: Any) -> bytes:
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def loads(data: bytes) -> Any:
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except WireError:
        raise
    except Exception as exc:  # truncated, garbage, wrong protocol
        raise WireError(f"unreadable message ({type(exc).__name__}: {exc})") from None


def send(conn, obj: Any) -> None:
    conn.send_bytes(dumps(obj))


def recv(conn) -> Any:
    """Read one plain message; EOFError when the other end is gone, WireError when it misbehaved."""
    try:
        data = conn.recv_bytes(MAX_MESSAGE_BYTES)
    except OSError as exc:
        if "bad message length" in str(exc):
            raise WireError(f"message over {MAX_MESSAGE_BYTES} bytes") from None
        raise EOFError(str(exc)) from None
    return loads(data)
