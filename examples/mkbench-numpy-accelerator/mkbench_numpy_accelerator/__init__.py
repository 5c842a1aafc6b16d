"""mkbench-numpy-accelerator: an example third-party mkbench plugin.

It contributes a backend whose "kernels" are NumPy functions and a hardware profile for the host
CPU. mkbench loads this module through the ``mkbench`` entry-point group (see pyproject.toml) and
calls the hooks below, each with a ``register`` callback.
"""

from pathlib import Path

from mkbench import hookimpl

from .backend import NumpyBackend

__all__ = ["NumpyBackend"]


@hookimpl
def register_backends(register):
    register(NumpyBackend())


@hookimpl
def register_hardware_profiles(register):
    register(Path(__file__).parent / "numpy-host.yaml")
