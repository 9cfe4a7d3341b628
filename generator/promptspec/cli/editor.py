"""`promptspec schema` and `promptspec completion`: what editors and shells
need to help someone write a spec and type the commands.

The schemas are spec/schemas.py's; completion scripts come from the command
line's own argparse parser through shtab, so they never drift from it. The
parser is passed in (parser.py builds it and imports this module).
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable


def add_commands(sub: argparse._SubParsersAction, root: Callable[[], argparse.ArgumentParser]) -> None:
    p = sub.add_parser("schema", help="print the JSON Schema of a spec file, for editors and check-jsonschema")
    p.add_argument("kind", nargs="?", default="spec", metavar="KIND",
                   help="spec (default), fragment, choice (a mode or personality entry; also: mode, personality), models or tool")
    p.add_argument("--path", action="store_true", help="print the installed schema file's path instead of its text")
    p.set_defaults(func=cmd_schema)
    p = sub.add_parser("completion", help="print a shell completion script (bash: source it; zsh: put it on $fpath as _promptspec)")
    p.add_argument("shell", choices=("bash", "zsh", "tcsh"))
    p.set_defaults(func=lambda args: cmd_completion(args, root()))


def cmd_schema(args: argparse.Namespace) -> int:
    from ..spec import schemas

    sys.stdout.write(f"{schemas.schema_path(args.kind)}\n" if args.path else schemas.schema_text(args.kind))
    return 0


def cmd_completion(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import shtab

    sys.stdout.write(shtab.complete(parser, shell=args.shell))
    return 0
