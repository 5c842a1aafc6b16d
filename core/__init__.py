"""mkbench: a multi-backend portability benchmark for GPU kernels."""

from .backend import Backend
from .errors import BadInput, CompileError, IntegrityViolation, MkbenchError, Unavailable
from .hookspecs import hookimpl
from .task import Shape, Task

__version__ = "0.1.0"
__all__ = ["Backend", "BadInput", "CompileError", "IntegrityViolation", "MkbenchError", "Shape", "Task", "Unavailable",
           "hookimpl"]
