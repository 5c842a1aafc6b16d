"""Built-in hardware profiles: every YAML file in this folder."""

from pathlib import Path

from mkbench.hookspecs import hookimpl


@hookimpl
def register_hardware_profiles(register):
    register(Path(__file__).parent)
