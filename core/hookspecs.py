"""Plugin hooks. Each receives a ``register`` callback, as in simonw/llm and datasette."""

import pluggy

hookspec = pluggy.HookspecMarker("mkbench")
hookimpl = pluggy.HookimplMarker("mkbench")


@hookspec
def register_backends(register):
    """Call ``register(backend)`` for each :class:`mkbench.backend.Backend` instance."""


@hookspec
def register_hardware_profiles(register):
    """Call ``register(path_or_profile)``: a YAML file, a folder of them, or a HardwareProfile."""


@hookspec
def register_tasks(register):
    """Call ``register(path_or_task)``: a task file, a folder of ``<category>/<task>.py``, or a Task."""
