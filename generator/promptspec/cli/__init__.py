"""The `promptspec` command line.

User mistakes print one line and exit 2; lint findings exit 1; a traceback is
only ever shown with --debug.  Commands are thin: they parse arguments, call
the library, and print.  parser.py declares the commands and their options,
commands.py runs them; this module is the entry point (`promptspec`,
`python -m promptspec`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..errors import PromptspecError
from .commands import cmd_render, default_spec
from .parser import build_parser

__all__ = ["build_parser", "cmd_render", "default_spec", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    from ..util.terminal import escaped_output

    args = build_parser().parse_args(argv)
    # render's output is the payload, byte for byte; --format github is workflow commands by design
    with escaped_output(args.command != "render", commands=getattr(args, "format", None) == "github"):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from ..errors import escape_controls
    from ..util.terminal import input_error

    try:
        if args.command not in ("schema", "completion"):
            from .commands import settle_defaults

            settle_defaults(args)  # [tool.promptspec] in the nearest pyproject.toml, by the gate rule
        return args.func(args)
    except PromptspecError as exc:
        if args.debug:
            raise
        print(f"promptspec: error: {exc.oneline()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        print("promptspec: interrupted", file=sys.stderr)
        return getattr(exc, "exit_code", 130)  # atomic.Interrupted: 143 for SIGTERM
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - last resort: never a raw traceback for users
        from ..measure.encodings import TokenizerError

        if isinstance(exc, TokenizerError):
            if args.debug:
                raise
            print(f"promptspec: error: {escape_controls(str(exc))}", file=sys.stderr)
            return 2
        if args.debug:
            raise
        crash = input_error(exc)  # too big, too deep, unencodable, or the system saying no: exit 2
        if crash is not None:
            print(f"promptspec: error: {crash}", file=sys.stderr)
            return 2
        print(f"promptspec: internal error: {type(exc).__name__}: {escape_controls(str(exc))} (rerun with --debug and report it)", file=sys.stderr)
        return 3
