"""`mkbench` command line. Each subcommand lives in its own module with ``add_parser`` and ``run``."""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

from ..errors import MkbenchError

#: subcommand -> its module, imported when `main` runs: `mkbench run` starts its device probe first
#: (:mod:`mkbench.engine.head_start`), and the modules import torch, the tasks and the engine
COMMANDS = {"run": "run_cmd", "list": "list_cmd", "plugins": "plugins_cmd", "report": "report_cmd",
            "export": "export_cmd", "validate": "validate_cmd", "import": "import_cmd", "analyze": "analyze_cmd"}


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments get one line (``error: argument --seed: ...``) and exit 2, not a usage dump."""

    def error(self, message: str):
        self.exit(2, f"error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    head_start = words[:1] == ["run"] and not {"-h", "--help"} & set(words)
    if head_start:
        from ..engine import head_start as early
        early.begin()
    try:
        return _main(argv)
    finally:
        if head_start:
            early.cancel()  # a run that ended before its probe (bad input) never took the worker


def _main(argv: list[str] | None) -> int:
    parser = OneLineParser(prog="mkbench", description="Multi-backend portability benchmark for GPU kernels.")
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {name: import_module(f".{module}", __name__) for name, module in COMMANDS.items()}
    for module in modules.values():
        module.add_parser(sub)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # a bad argument (one line already printed), or --help
        return exc.code if isinstance(exc.code, int) else 2
    args.own_process = argv is None  # the command line this process was started with (not a caller's list)
    try:
        return modules[args.command].run(args) or 0
    except MkbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted: finished units are saved; run the same command with --resume to continue", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
