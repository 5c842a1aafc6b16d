"""Kernel launches counted in a worker process, for the decoy check (a correct answer with no
launch of the backend's own kernels is a ``hack``).

The CUDA backend counts through its CuPy subclasses and ``load_inline`` wrapper, the HIP backend
through its loader; both add to this one counter, and both backends read it through
:class:`NativeLaunchCounter`. A worker runs one backend, so the count is that backend's.
"""

from __future__ import annotations

from mkbench.backend import LaunchCounter

_LAUNCHES = [0]  # kernel launches counted in this worker process


def launches() -> int:
    return _LAUNCHES[0]


def count_launch() -> None:
    _LAUNCHES[0] += 1


class NativeLaunchCounter(LaunchCounter):
    """Counts the launches made inside the block."""

    def __enter__(self):
        self._start = launches()
        return self

    def __exit__(self, *exc):
        self.count = launches() - self._start


__all__ = ["NativeLaunchCounter", "count_launch", "launches"]
