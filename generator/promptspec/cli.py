"""The `promptspec` command line.

User mistakes print one line and exit 2; lint findings exit 1; a traceback is
only ever shown with --debug.  Commands are thin: they parse arguments, call
the library, and print.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, Sequence

from . import __version__
from .errors import PromptspecError

DEFAULT_SPEC = Path(__file__).resolve().parents[2] / "templates"
"""The embedded example spec, when running from a checkout."""

def default_spec() -> Path:
    return DEFAULT_SPEC


def _spec_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--spec", type=Path, default=None, metavar="DIR", help="spec folder (default: the embedded templates/)")


def _spec_dir(args: argparse.Namespace) -> Path:
    return args.spec if args.spec is not None else default_spec()


def _counter(args: argparse.Namespace):
    from .tokens import TokenCounter

    return TokenCounter(getattr(args, "cache_dir", None))


# ---------------------------------------------------------------------------
# list


def cmd_list(args: argparse.Namespace) -> int:
    from . import pipeline

    result = pipeline.run(_spec_dir(args), counter=_counter(args))
    axes = [name for name, _ in result.spec.axes]
    rows = []
    for m in result.measures:
        v = m.request.variant
        rows.append(
            {
                "id": v.id,
                **dict(v.values),
                "tokens": m.total,
                "codex_estimate": m.estimate,
                "encoding": m.encoding,
                "percent_of_usable_window": None if m.percent_of_usable is None else round(m.percent_of_usable, 3),
                "headroom_before_auto_compact": m.headroom,
            }
        )
    if args.format == "json":
        sys.stdout.write(json.dumps({"axes": axes, "variants": rows}, indent=2, ensure_ascii=False) + "\n")
        return 0
    headers = [*axes, "tokens", "% usable"]
    table = [[*(r[a] for a in axes), str(r["tokens"]), "-" if r["percent_of_usable_window"] is None else f"{r['percent_of_usable_window']:.2f}%"] for r in rows]
    widths = [max(len(h), *(len(row[i]) for row in table)) if table else len(h) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    for row in table:
        out.append("  ".join(c.rjust(w) if i >= len(axes) else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    out.append(f"{len(rows)} variants; % usable = tokens / (context_window x effective_context_window_percent / 100)")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


# ---------------------------------------------------------------------------
# render


def _extra_axes(values: Sequence[str]) -> dict[str, str]:
    from .errors import UsageError

    out = {}
    for item in values or ():
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--axis expects NAME=VALUE, got {item!r}")
        out[name] = value
    return out


def cmd_render(args: argparse.Namespace) -> int:
    from . import export
    from .assemble import Assembler, find_variant
    from .measure import measure_all
    from .spec import load_spec

    spec = load_spec(_spec_dir(args))
    variant = find_variant(spec, args.model, args.personality, args.mode, _extra_axes(args.axis))
    request = Assembler(spec).assemble(variant)
    for note in request.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.format == "json":
        measure = measure_all(spec, [request], _counter(args))[0]
        sys.stdout.write(export.dumps(export.with_tokens(request, measure.summary())))
    elif args.format == "layout":
        sys.stdout.write(export.layout(request))
    else:
        sys.stdout.write(export.text_view(request))
    return 0


# ---------------------------------------------------------------------------
# tokens


def cmd_tokens(args: argparse.Namespace) -> int:
    from .tokens import count_files, format_token_lines

    results = count_files(args.files, args.encoding, args.errors, counter=_counter(args))
    sys.stdout.write(format_token_lines(results))
    return 0


# ---------------------------------------------------------------------------
# import-codex


def cmd_import_codex(args: argparse.Namespace) -> int:
    from .codex_import import import_codex

    written = import_codex(args.codex_dir, args.out, force=args.force)
    print(f"wrote a spec to {written}")
    return 0


# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="promptspec",
        description="Assemble every variant of an agent prompt spec, count its tokens, publish it.",
    )
    parser.add_argument("--version", action="version", version=f"promptspec {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--cache-dir", type=Path, default=None, help="token cache folder (default: ~/.cache/promptspec)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("list", help="list every variant of the matrix with its tokens")
    _spec_arg(p)
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("render", help="assemble one variant")
    _spec_arg(p)
    p.add_argument("--model", help="model slug (default: the first model)")
    p.add_argument("--personality", help="personality (default: default)")
    p.add_argument("--mode", help="collaboration mode (default: the first mode)")
    p.add_argument("--axis", action="append", metavar="NAME=VALUE", help="value of an extra axis (repeatable)")
    p.add_argument("--format", choices=("text", "json", "layout"), default="text")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("tokens", help="count the tokens of files' exact contents")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--encoding", default="o200k_base", help="o200k_base (default) or cl100k_base")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict", help="how to treat bytes that are not UTF-8")
    p.set_defaults(func=cmd_tokens)

    p = sub.add_parser("import-codex", help="turn a Codex checkout into a spec folder")
    p.add_argument("codex_dir", type=Path, metavar="CODEX_DIR")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.add_argument("--force", action="store_true", help="replace DIR if it already holds an imported spec")
    p.set_defaults(func=cmd_import_codex)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except PromptspecError as exc:
        if args.debug:
            raise
        print(f"promptspec: error: {exc.oneline()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("promptspec: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - last resort: never a raw traceback for users
        from .tokens import TokenizerError

        if isinstance(exc, TokenizerError):
            if args.debug:
                raise
            print(f"promptspec: error: {exc}", file=sys.stderr)
            return 2
        if args.debug:
            raise
        print(f"promptspec: internal error: {type(exc).__name__}: {exc} (rerun with --debug and report it)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
