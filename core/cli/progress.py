"""Progress of a run: a live display on a terminal (units, rate, ETA, each lane's state), plain
lines otherwise (one per finished unit)."""

from __future__ import annotations

import time

from ..engine.runner import Progress
from ..verdicts import Verdict, worst


class PlainProgress(Progress):
    def __init__(self):
        self.total = self.done = self.session = 0
        self.t0 = time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def start(self, total: int, done: int) -> None:
        self.total, self.done, self.t0 = total, done, time.monotonic()

    def rate(self) -> str:
        """Units per second over this session, and the time left at that rate."""
        self.session += 1
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        per_s = self.session / elapsed
        left = (self.total - self.done) / per_s if per_s > 0 else 0.0
        return f"{per_s:.2f} units/s, about {left / 60:.0f} min left"

    EVERY_S = 10.0  # plain lines: a log, not a screen; one line every ten seconds at most

    def unit_done(self, unit, rows) -> None:
        self.done += 1
        verdict = worst(r["verdict"] for r in rows) or Verdict.SKIPPED
        rate = self.rate()
        now = time.monotonic()
        if self.done == self.total or now - getattr(self, "_last", 0.0) >= self.EVERY_S:
            self._last = now
            print(f"[{self.done}/{self.total}] {unit.task.qualified_name} [{unit.method}] {verdict} ({rate})",
                  flush=True)


class LiveProgress(PlainProgress):
    """rich's Progress for the bar, rate and ETA, with a table of the lanes under it."""

    def __init__(self):
        super().__init__()
        from rich.console import Group
        from rich.live import Live
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
        from rich.progress import Progress as Bar
        self._bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn())
        self._handle = self._bar.add_task("starting", total=None, rate="")
        self._lanes: list[str] = []
        self._group = Group
        self._live = Live(self._render(), refresh_per_second=4, transient=False)

    def _render(self):
        from rich.table import Table
        table = Table(show_header=False, box=None, padding=(0, 1))
        for line in self._lanes:
            table.add_row(line)
        return self._group(self._bar, table)

    def __enter__(self):
        self._live.__enter__()
        return self

    def __exit__(self, *exc):
        self._live.__exit__(*exc)
        return False

    def start(self, total: int, done: int) -> None:
        super().start(total, done)
        self._bar.update(self._handle, total=total, completed=done, description="units")

    def unit_done(self, unit, rows) -> None:
        self.done += 1
        self._bar.update(self._handle, completed=self.done, description=unit.task.qualified_name[:40],
                         rate=self.rate().split(",")[0])
        self._live.update(self._render())

    def tick(self, lanes: list[str]) -> None:
        self._lanes = lanes
        self._live.update(self._render())

    def log(self, line: str) -> None:
        self._live.console.print(line)


def make_progress(plain: bool) -> PlainProgress:
    return PlainProgress() if plain else LiveProgress()
