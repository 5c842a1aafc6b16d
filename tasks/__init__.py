"""Built-in tasks (``<category>/<task>.py`` files in this folder, each defining ``TASK``), plus
any folders of the same layout named in ``MKBENCH_TASK_DIRS`` (os.pathsep-separated), e.g. tasks
written by ``mkbench import``."""

import os
from pathlib import Path

from mkbench.errors import BadInput
from mkbench.hookspecs import hookimpl


@hookimpl
def register_tasks(register):
    register(Path(__file__).parent)
    for folder in filter(None, os.environ.get("MKBENCH_TASK_DIRS", "").split(os.pathsep)):
        if not Path(folder).is_dir():
            raise BadInput(f"MKBENCH_TASK_DIRS: {folder} is not a directory")
        register(Path(folder))
