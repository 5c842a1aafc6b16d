"""Exceptions the CLI turns into one-line messages."""


class MkbenchError(Exception):
    """Base class: the CLI prints ``error: <message>`` and exits with ``exit_code``."""

    exit_code = 1


class BadInput(MkbenchError):
    """Malformed task, profile, solution directory, unknown name, or unusable store."""

    exit_code = 2


class Unavailable(MkbenchError):
    """A backend cannot run here (missing toolchain, wrong vendor); carries the reason."""

    exit_code = 4

    def __init__(self, reason: str):
        super().__init__(f"unavailable: {reason}")
        self.reason = reason


class CompileError(Exception):
    """A candidate failed to build (syntax, import, missing entry point, JIT/compiler error)."""


class CompiledNotLaunched(RuntimeError):
    """Raised by a backend's compile-only call (``Backend.prewarm``) where a kernel would have been
    launched: it was built, which is all that call is for."""


class IntegrityViolation(Exception):
    """Raised by a backend's ``run`` or ``time`` when it catches the candidate breaking a runtime
    rule only that backend can see (reading device results back to compute on the host, work on
    a queue or stream of its own). The harness records a ``hack`` verdict with the message."""
