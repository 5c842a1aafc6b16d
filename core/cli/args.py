"""Argument types that refuse nonsense at parse time, with one line saying why: every limit
positive, seeds in SQLite's integer range, names non-empty and printable, output paths that are
files (not directories) with names the filesystem accepts."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

SQLITE_MAX_INT = 2**63 - 1
MAX_NAME = 200
MAX_METHOD = 1000  # a method name is data (slugged in file names), not a path: it may be long


def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a positive number")
    return value


def non_negative(text: str) -> float:
    """A finite number of 0 or more (0 turns a wait off)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be 0 or more")
    return value


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be between 0 and 1")
    return value


def between(low: float, high: float):
    """A number in (low, high]: e.g. a share of the device's memory that may exceed it, within reason."""
    def parse(text: str) -> float:
        value = positive(text)
        if not low < value <= high:
            raise argparse.ArgumentTypeError(f"{text!r}: must be above {low:g} and at most {high:g}")
        return value
    return parse


def count(low: int, high: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r}: must be between {low} and {high}")
        return value
    return parse


def seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= SQLITE_MAX_INT:
        raise argparse.ArgumentTypeError(f"{text!r}: a seed must be between 0 and 2**63-1")
    return value


def name(text: str, limit: int = MAX_NAME) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    if len(text) > limit or not text.isprintable():
        raise argparse.ArgumentTypeError(f"{text[:40]!r}...: names are at most {limit} printable characters")
    return text


def method(text: str) -> str:
    """Any printable name: files named after it are slugged, the store keeps it as given."""
    return name(text, MAX_METHOD)


def name_list(text: str) -> list[str]:
    """'a,b' -> ['a', 'b']; an empty item ('', 'a,,b') is an error, never 'everything'."""
    items = [n.strip() for n in text.split(",")]
    if not text.strip() or any(not n for n in items):
        raise argparse.ArgumentTypeError(f"{text!r}: empty name")
    return [name(n) for n in items]


def baselines(text: str) -> list[str]:
    return [] if text == "none" else name_list(text)


def gpus(text: str) -> str:
    if text == "all":
        return text
    items = text.split(",")
    if not all(i.strip().isdigit() for i in items):
        raise argparse.ArgumentTypeError(f"{text!r}: 'all' or GPU indices such as 0,1")
    return ",".join(str(int(i)) for i in items)


def file_path(text: str) -> Path:
    """A path to write a file at: not an existing directory, every component a name the filesystem
    accepts (255 bytes), its folder existing or creatable."""
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    path = Path(text)
    if any(len(os.fsencode(part)) > 255 for part in path.parts):
        raise argparse.ArgumentTypeError(f"{text[:40]!r}...: a path component is longer than 255 bytes")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a directory, not a file")
    return path


def existing_dir(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a directory")
    return path
