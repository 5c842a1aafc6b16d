"""Keyed digests of the results store's rows, so that a row changed behind mkbench's back is evident.

mkbench runs untrusted candidates in worker processes. A hostile one was seen rewriting its own rows
in the SQLite store from a detached process, after which every report called it correct. Every row
the orchestrator writes (results, the units' completion markers, the baseline cache, the runs'
configuration and environment) therefore carries ``digest``: HMAC-SHA256 under a per-store key over
:func:`canonical` of the row's content columns (the store names them; never an autoincrement id of
its own). Readers (``Store.results()``, ``mkbench report``, ``mkbench export``) recompute it: a row
whose digest does not match, or that has none, is named and never reported with its stored verdict.

Where the key lives, and why there
    Not in the store, not next to it, not in the source tree: the candidates' workers can reach all
    three. It is in a per-user key directory, ``$MKBENCH_KEY_DIR``, else
    ``$XDG_STATE_HOME/mkbench/keys``, else ``~/.local/state/mkbench/keys`` (mode 0700), one file per
    store (mode 0600) named by the random store id kept in the store's ``meta`` table, created on the
    store's first write. The workers' confinement (a Landlock rule, later) denies them read access to
    that directory; the store's own directory must stay writable by the orchestrator only. A process
    that can read the key can forge digests: the digest makes tampering evident, it does not prevent
    a process with the orchestrator's rights from rewriting history.

What a reader can say about a store (:class:`Checker`)
    ``verified`` rows match; ``tampered`` rows do not (``digest mismatch``) or have no digest
    although the store has digests (``no digest``). A store from before digests reads as
    "unverified: written before digests", one whose key is not on this machine (e.g. a store
    committed under reports/ and read elsewhere) as "unverified: key not on this machine": said once
    per store, never as an error. Rows of an older store that was upgraded by a later write are
    sealed then as ``legacy``: unverified (they were written before digests), yet any change after the
    upgrade shows. Reading never writes to the store or creates a key.

Carrying a store to another machine
    A store's key stays on the machine that wrote it (a lent GPU machine, a cluster node). To go on
    writing to the store elsewhere, carry its key file into that machine's key directory; where the
    key is lost, ``mkbench run --adopt-store`` takes the store over at its first write: a new key and
    id, and every row already there sealed as ``legacy`` under it (unverified, yet later changes
    show), the adoption recorded in the store's ``meta``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import BadInput

STORE_ID_KEY = "store_id"  # the meta key naming the store's key file
ADOPTED_KEY = "adopted"  # the meta key listing the ids a store had before it was adopted (Store._adopt)
SEALED, LEGACY = "v1", "legacy"  # digest prefixes: written with a digest / sealed when an older store was upgraded

UNVERIFIED_OLD = "unverified: written before digests"
UNVERIFIED_NO_KEY = "unverified: key not on this machine"
MISMATCH = "changed after it was written (digest mismatch)"
NO_DIGEST = "has no digest although the store has digests (inserted or altered behind mkbench's back)"


def key_dir() -> Path:
    if os.environ.get("MKBENCH_KEY_DIR"):
        return Path(os.environ["MKBENCH_KEY_DIR"])
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "mkbench" / "keys"


def _key_path(store_id: str) -> Path:
    if not store_id.isalnum():  # the id comes from the store: never let it name a path elsewhere
        raise ValueError(f"bad store id {store_id!r}")
    return key_dir() / f"{store_id}.key"


def load_key(store_id: str | None) -> bytes | None:
    """The key of store ``store_id`` on this machine, or None."""
    if not store_id:
        return None
    try:
        return bytes.fromhex(_key_path(store_id).read_text().split("\n", 1)[0].strip()) or None
    except (OSError, ValueError):  # no such file, or not a key: nothing can be verified with it
        return None


def new_key(store_path: Path) -> tuple[str, bytes]:
    """(store id, key) of a store's new key, its file written 0600 in the 0700 key directory."""
    folder = key_dir()
    store_id, key = secrets.token_hex(16), secrets.token_bytes(32)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if folder.stat().st_mode & 0o077:
            os.chmod(folder, 0o700)
        fd = os.open(_key_path(store_id), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:  # the store's path on the second line is for the person reading the folder
            f.write(f"{key.hex()}\n{Path(store_path).resolve()}\n")
    except OSError as exc:
        raise BadInput(f"cannot keep the digest key of results store {store_path} in {folder}: "
                       f"{exc.strerror or exc}; set MKBENCH_KEY_DIR to a private folder this user can write") from None
    return store_id, key


def discard_key(store_id: str) -> None:
    _key_path(store_id).unlink(missing_ok=True)


def canonical(table: str, row: Mapping[str, Any], columns: Iterable[str]) -> bytes:
    """The bytes a row's digest covers: the table's name and the content columns' values, as read
    back from SQLite (so a REAL written as an int compares as the float it is stored as)."""
    return json.dumps([table, {c: row[c] for c in columns}], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True, allow_nan=True).encode()


def digest(key: bytes, table: str, row: Mapping[str, Any], columns: Iterable[str], prefix: str = SEALED) -> str:
    return f"{prefix}:{hmac.new(key, canonical(table, row, columns), hashlib.sha256).hexdigest()}"


class Checker:
    """Verifies rows of one store: ``status`` is None when rows can be verified here, else the one
    line saying why not (:data:`UNVERIFIED_OLD`, :data:`UNVERIFIED_NO_KEY`)."""

    def __init__(self, has_digests: bool, key: bytes | None):
        self.key = key
        self.status = None if key else (UNVERIFIED_NO_KEY if has_digests else UNVERIFIED_OLD)

    def check(self, table: str, row: Mapping[str, Any], columns: Iterable[str]) -> tuple[str, str | None]:
        """(``verified`` | ``unverified`` | ``tampered``, the problem of a tampered row)."""
        if self.key is None:
            return "unverified", None
        stored = row["digest"]
        if not stored:
            return "tampered", NO_DIGEST
        prefix = stored.split(":", 1)[0]
        if prefix in (SEALED, LEGACY) and hmac.compare_digest(stored, digest(self.key, table, row, columns, prefix)):
            return ("verified" if prefix == SEALED else "unverified"), None
        return "tampered", MISMATCH


def describe(table: str, row: Mapping[str, Any]) -> str:
    """How a report names a row of ``table``."""
    if table == "results":
        return f"row {row['task']} {row['shape']} {row['dtype']} {row['method']}"
    if table == "units":
        return f"completion marker {row['task']} {row['backend']} {row['method']}"
    if table == "baseline_cache":
        return f"cached baseline {row['task']} {row['shape']} {row['dtype']} {row['backend']}"
    return f"run {row['id']} (its configuration, environment and status)"


def problem_line(table: str, row: Mapping[str, Any], problem: str) -> str:
    """``row <task> <shape> <dtype> <method>: <problem> (run <id>)``, and the like for other tables."""
    return f"{describe(table, row)}: {problem}" + (f" (run {row['run_id']})" if table in ("results", "units") else "")


@dataclass
class Integrity:
    """What verifying one store found: ``status`` (None, or why nothing could be verified here),
    rows counted per state, and each row that did not verify, named (:func:`describe`)."""

    store: str
    status: str | None
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    adopted: list[str] = field(default_factory=list)  # the ids the store had before it was adopted

    def count(self, state: str) -> None:
        self.counts[state] = self.counts.get(state, 0) + 1

    @property
    def notes(self) -> list[str]:
        """The store-wide lines (each said once): why it is unverified, or how many rows predate digests."""
        if self.status:
            return [f"{self.store}: {self.status}"]
        legacy = self.counts.get("unverified", 0)
        if self.adopted:
            return [f"{self.store}: {legacy} row(s) unverified: written before the store was adopted on a machine "
                    f"without its key (store id {', '.join(self.adopted)}), sealed then"] * bool(legacy)
        return [f"{self.store}: {legacy} row(s) {UNVERIFIED_OLD} (sealed when the store was upgraded)"] * bool(legacy)

    def warning(self) -> str | None:
        """The CLI's one-line warning, or None when every row verified."""
        if self.problems:
            return (f"{self.store}: {len(self.problems)} record(s) changed behind mkbench's back (result rows "
                    f"read as verdict `tampered`, not as their stored verdict): {'; '.join(self.problems[:3])}"
                    + (f"; and {len(self.problems) - 3} more" if len(self.problems) > 3 else ""))
        return "; ".join(self.notes) or None

    def warn(self) -> None:
        """Print :meth:`warning`, if any, as one line on standard error (the CLI's readers)."""
        line = self.warning()
        if line:
            print(f"warning: {line}", file=sys.stderr)

    def as_dict(self) -> dict[str, Any]:
        return {"store": self.store, "status": self.status or ("tampered" if self.problems else "verified"),
                "notes": self.notes, "problems": self.problems, "counts": self.counts,
                **({"adopted_from": self.adopted} if self.adopted else {})}


__all__ = ["ADOPTED_KEY", "Checker", "Integrity", "LEGACY", "MISMATCH", "NO_DIGEST", "SEALED", "STORE_ID_KEY",
           "UNVERIFIED_NO_KEY", "UNVERIFIED_OLD", "canonical", "describe", "digest", "discard_key", "key_dir",
           "load_key", "new_key", "problem_line"]
