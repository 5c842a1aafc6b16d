"""mkbench: a multi-backend portability benchmark for GPU kernels.

``Shape`` and ``Task`` (which import torch) are loaded when first named, not with the package: `mkbench run`
starts its device probe's worker before the orchestrator imports torch (:mod:`mkbench.engine.head_start`),
and that needs ``mkbench.worker`` importable in a blink."""

from importlib import import_module

from .backend import Backend
from .errors import BadInput, CompileError, IntegrityViolation, MkbenchError, Unavailable
from .hookspecs import hookimpl

__version__ = "0.1.0"
__all__ = ["Backend", "BadInput", "CompileError", "IntegrityViolation", "MkbenchError", "Shape", "Task", "Unavailable",
           "hookimpl"]

_LAZY = {"Shape": ".task", "Task": ".task"}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # once loaded, an ordinary attribute
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
