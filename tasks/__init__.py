"""Built-in tasks: ``<category>/<task>.py`` files in this folder, each defining ``TASK``."""

from pathlib import Path

from mkbench.hookspecs import hookimpl


@hookimpl
def register_tasks(register):
    register(Path(__file__).parent)
