"""`mkbench` command line. Each subcommand lives in its own module with ``add_parser`` and ``run``."""

from __future__ import annotations

import argparse
import sys

from ..errors import MkbenchError
from . import analyze_cmd, export_cmd, import_cmd, list_cmd, plugins_cmd, report_cmd, run_cmd, validate_cmd

COMMANDS = {"run": run_cmd, "list": list_cmd, "plugins": plugins_cmd, "report": report_cmd, "export": export_cmd,
            "validate": validate_cmd, "import": import_cmd,
            "analyze": analyze_cmd}


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments get one line (``error: argument --seed: ...``) and exit 2, not a usage dump."""

    def error(self, message: str):
        self.exit(2, f"error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="mkbench", description="Multi-backend portability benchmark for GPU kernels.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        module.add_parser(sub)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # a bad argument (one line already printed), or --help
        return exc.code if isinstance(exc.code, int) else 2
    args.own_process = argv is None  # the command line this process was started with (not a caller's list)
    try:
        return COMMANDS[args.command].run(args) or 0
    except MkbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted: finished units are saved; run the same command with --resume to continue", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
