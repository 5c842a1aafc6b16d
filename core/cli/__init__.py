"""`mkbench` command line. Each subcommand lives in its own module with ``add_parser`` and ``run``."""

from __future__ import annotations

import argparse
import sys

from ..errors import MkbenchError
from . import analyze_cmd, export_cmd, import_cmd, list_cmd, plugins_cmd, report_cmd, run_cmd, validate_cmd

COMMANDS = {"run": run_cmd, "list": list_cmd, "plugins": plugins_cmd, "report": report_cmd, "export": export_cmd,
            "validate": validate_cmd, "import": import_cmd,
            "analyze": analyze_cmd}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mkbench", description="Multi-backend portability benchmark for GPU kernels.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        module.add_parser(sub)
    args = parser.parse_args(argv)
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
