"""Packages derived from the folders, not listed by hand: a subpackage added under core/ or backends/
(or a new task category, or a kernel folder) ships in the wheel without anyone remembering to name it
(a hand-kept list once left mkbench.engine out of every non-editable install). Namespace discovery,
because task categories and kernel folders are plain folders of modules and sources, not packages.
Everything else lives in pyproject.toml."""

from setuptools import find_namespace_packages, setup

# the design keeps top-level core/, backends/, tasks/ ... folders under one `mkbench` namespace
ROOTS = {
    "mkbench": "core",
    "mkbench.backends": "backends",
    "mkbench.tasks": "tasks",
    "mkbench.hardware_profiles": "hardware_profiles",
}


def mapped_packages() -> list[str]:
    packages = []
    for prefix, folder in ROOTS.items():
        packages.append(prefix)
        packages += [f"{prefix}.{name}" for name in find_namespace_packages(folder, exclude=["*__pycache__*"])]
    return packages


setup(package_dir=ROOTS, packages=mapped_packages())
