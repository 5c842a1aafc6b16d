import pytest

import mkbench_numpy_accelerator
from mkbench import plugins


@pytest.fixture
def numpy_plugin():
    """The plugin, registered with mkbench for one test.

    Installed, mkbench has already loaded it from its entry point; from a plain checkout it is
    registered in-process here and unregistered afterwards, so no test leaks it into the next.
    """
    if plugins.get_plugin_manager().is_registered(mkbench_numpy_accelerator):
        yield mkbench_numpy_accelerator
        return
    plugins.register_plugin(mkbench_numpy_accelerator, name="numpy_accelerator")
    yield mkbench_numpy_accelerator
    plugins.unregister_plugin("numpy_accelerator")
