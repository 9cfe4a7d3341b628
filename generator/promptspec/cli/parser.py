"""The `promptspec` commands and their options (argparse); each command's
`func` is its runner in commands.py, looked up when the parser is built (so a
script or test may replace a runner)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

from .. import __version__
from . import commands


class _Parser(argparse.ArgumentParser):
    """argparse, with the one-line error format of every other mistake
    (argparse's own prints the whole usage block first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"promptspec: error: {' '.join(message.split())} (see '{self.prog} --help')\n")


SPEC_HELP = ("spec folder (default, the same for every command: spec in [tool.promptspec] of pyproject.toml "
             "(not for gates), else templates/ at the top of the current git repository, else the embedded "
             "example; -v shows which)")


def spec_arg(p: argparse.ArgumentParser) -> None:
    """--spec, with the same help (the one spec rule) on every command."""
    p.add_argument("--spec", type=Path, default=None, metavar="DIR", help=SPEC_HELP)


def codex_run_args(p: argparse.ArgumentParser) -> None:
    """How Codex runs (timeout, recorder port, jobs, capture cache): the same flags for import-codex and verify."""
    p.add_argument("--timeout", type=float, default=commands.DEFAULT_CODEX_TIMEOUT, metavar="SECONDS", help="the longest one Codex step may take (default 60)")
    p.add_argument("--port", type=int, default=0, metavar="N", help="the loopback recorder's port (default: any free one; a fixed port runs one Codex at a time)")
    p.add_argument("--jobs", type=int, default=0, metavar="N", help="Codex processes capturing at once, each in its own scratch world (default: one per core)")
    p.add_argument("--no-cache", dest="cache", action="store_false",
                   help="run Codex for every capture: the capture cache (today's captures of this binary and world) is neither read nor written")


def world_args(p: argparse.ArgumentParser, prefix: str, default: str = "") -> None:
    """The user's world for a Codex run (oracle/world.py): the same flags for import-codex and verify."""
    p.add_argument("--cwd", metavar="DIR", help=f"{prefix}run Codex in this project (its AGENTS.md chain, git root){default}")
    p.add_argument("--codex-home", metavar="DIR", help=f"{prefix}take config.toml, AGENTS.md and skills from this Codex home (never auth.json, sessions, history, logs)")
    p.add_argument("-c", dest="config", action="append", metavar="KEY=VALUE", help=f"{prefix}a config override (TOML value) for every Codex process (repeatable)")
    p.add_argument("--enable", action="append", metavar="FEATURE", help=f"{prefix}turn a Codex feature on (repeatable)")
    p.add_argument("--disable", action="append", metavar="FEATURE", help=f"{prefix}turn a Codex feature off (repeatable)")


TOKENS_EPILOG = (
    "Token counts: base instructions and sections are exact counts with the model's encoding. "
    "Tools are an offline count, with the same encoding, of the tool list's JSON exactly as serialised "
    "in the request (the API's own accounting of tool definitions is not public). Totals, % of the "
    "usable window, headroom before auto-compaction and the lock file include the tools; Codex's "
    "ceil(bytes/4) estimate is shown beside every count."
)


FINDINGS_FORMATS = "github: workflow annotations on file and line; sarif: SARIF 2.1.0 for code scanning"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="promptspec",
        description="Assemble every variant of an agent prompt spec, count its tokens, publish it.",
        epilog=TOKENS_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"promptspec {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--cache-dir", type=Path, default=None, help="token cache folder (default: the user cache folder, e.g. ~/.cache/promptspec)")
    parser.add_argument("--project-config", action="store_true",
                        help="let gate commands (check, diff, lint, history, verify) take defaults from [tool.promptspec] "
                             "in pyproject.toml; off by default, since a pull request brings its own pyproject.toml")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print the pipeline's stage timings to stderr (list, build, explore, lock, check, diff, lint)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # -v also works after the command (`promptspec build -v`).
    verbose = argparse.ArgumentParser(add_help=False)
    verbose.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub.required = True

    p = sub.add_parser("list", help="list every variant of the matrix with its tokens (tools included)", parents=[verbose], epilog=TOKENS_EPILOG)
    spec_arg(p)
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=commands.cmd_list)

    p = sub.add_parser(
        "render", help="assemble one variant",
        epilog="--format json writes the whole Responses API body (model, instructions, input, tools and the request "
        "parameters, in the order Codex sends them) plus a 'tokens' key. " + TOKENS_EPILOG,
    )
    spec_arg(p)
    p.add_argument("--model", help="model slug (default: the first model)")
    p.add_argument("--personality", help="personality (default: default)")
    p.add_argument("--mode", help="collaboration mode (default: the first mode)")
    p.add_argument("--axis", action="append", metavar="NAME=VALUE", help="value of an extra axis (repeatable)")
    p.add_argument("--format", choices=("text", "json", "layout"), default="text")
    p.add_argument("--conversation", type=Path, default=None, metavar="FILE",
                   help="a conversation script (JSON or YAML: {turns: [{user, reply, usage?, set?, skills?} or {compact: true, reply}]}): "
                        "every request the thread sends, in order; the variant options give its start "
                        "(json: {\"requests\": [BODY, ...]}; text: a transcript of each request's new items)")
    p.set_defaults(func=commands.cmd_render)

    p = sub.add_parser("tokens", help="count the tokens of files' exact contents")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--encoding", default="o200k_base", help="o200k_base (default) or cl100k_base")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict", help="how to treat bytes that are not UTF-8")
    p.set_defaults(func=commands.cmd_tokens)

    p = sub.add_parser("build", help="write the site's pages as a plain folder of Markdown + assets (for other site engines)", parents=[verbose])
    spec_arg(p)
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder (replaced only when the build succeeds; see --in-place)")
    p.add_argument("--path", default="prompts", metavar="FOLDER", help="folder of the pages inside DIR (default: prompts)")
    p.add_argument("--docs", type=Path, default=None, metavar="DOCS",
                   help="hand-written pages to copy into DIR, with their <!-- promptspec:... --> examples expanded")
    p.add_argument("--in-place", action="store_true",
                   help="rewrite only changed files (each atomically) and remove stale ones, so watchers such as zensical serve reload")
    p.add_argument("--base", default=None, metavar="BASE",
                   help="what the Changes page compares with: lock (the spec folder's prompts.lock.json, default), none, a git revision or a spec folder (./DIR or dir:DIR)")
    p.add_argument("--variant-pages", action="append", default=None, metavar="WHICH",
                   help="which variants get a page of their own (the others are in the explorer): auto (default: all up to "
                        "1,000 variants, else none), all, none, or AXIS=VALUE[,VALUE...] (globs allowed; repeat for more axes)")
    p.add_argument("--list-limit", type=int, default=200, metavar="N",
                   help="overview pages list variants one by one up to N, and summarise above (default: 200)")
    p.add_argument("--history", action="append", default=None, metavar="SIDE",
                   help="a release for a History section, in order (repeat; two at least): a git revision, dir:PATH or "
                        "lock:PATH, optionally followed by ,label=NAME and ,date=YYYY-MM-DD, as for `promptspec history`")
    p.add_argument("--history-chart", action="append", default=None, metavar="VARIANT",
                   help="a variant id the History timeline follows (repeat; default: one per model)")
    p.add_argument("--conformance", type=Path, default=None, metavar="FILE",
                   help="a stored `promptspec verify --out` report, shown on the pages of the variants it compared")
    p.set_defaults(func=commands.cmd_build)

    p = sub.add_parser("explore", help="write the variant explorer as a standalone folder (open index.html; no MkDocs)", parents=[verbose])
    spec_arg(p)
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder (replaced only when the build succeeds)")
    p.set_defaults(func=commands.cmd_explore)

    p = sub.add_parser("import-codex", help="turn a Codex checkout, or a released Codex CLI (--cli), into a spec folder")
    p.add_argument("codex_dir", type=Path, metavar="CODEX_DIR", nargs="?", default=None)
    p.add_argument("--cli", metavar="PATH", help="a released Codex CLI: its `npm install --prefix` folder or the binary (run offline in a scratch HOME)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.add_argument("--force", action="store_true", help="replace DIR if it already holds an imported spec")
    p.add_argument("--model", action="append", metavar="SLUG", help="with --cli: import only this model (repeatable; default: all)")
    p.add_argument("--only", action="append", metavar="AXIS=VALUE[,VALUE...]",
                   help="with --cli: capture and write only these values of an axis (personality, mode, sandbox_mode,"
                        " approval_policy; Codex's names, e.g. personality=unset; repeatable, one axis each)")
    world_args(p, "with --cli: ")
    p.add_argument("--later-turns", action="store_true",
                   help="with --cli: also capture the standard threads (switches, a skill mention, compactions) and learn what later "
                        "requests send (turns:); nothing is written unless the spec reproduces every request of every thread")
    codex_run_args(p)
    p.set_defaults(func=commands.cmd_import_codex)

    p = sub.add_parser("verify", help="drive a released Codex CLI and compare its first requests with the spec's, byte for byte")
    p.add_argument("--cli", metavar="PATH", required=True, help="the Codex CLI: its `npm install --prefix` folder or the binary")
    spec_arg(p)
    p.add_argument("--sample", type=int, default=None, metavar="N", help="compare N variants spread over the matrix (default: all)")
    p.add_argument("--threads", type=int, default=2, metavar="N",
                   help="also compare every request of the standard threads (two turns, each switch, a skill mention, compactions) "
                        "started from N compared variants, one of each compaction family first (default 2; 0: none)")
    p.add_argument("--out", type=Path, default=None, metavar="FILE", help="store the report as JSON (for the site's Conformance page)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    world_args(p, "", " (default: the world the spec's provenance.json records)")
    codex_run_args(p)
    p.set_defaults(func=commands.cmd_verify)
    site_sub = sub.add_parser("site", help="set up an MkDocs site for a spec").add_subparsers(dest="action", metavar="ACTION", required=True)
    q = site_sub.add_parser("init", help="write DIR/mkdocs.yml and DIR/docs/index.md for a spec (nothing is overwritten)")
    q.add_argument("dir", type=Path, metavar="DIR")
    q.add_argument("--spec", type=Path, default=None, metavar="SPEC", help="spec folder (default: DIR itself, if it holds spec.yaml)")
    q.add_argument("--conformance", type=Path, default=None, metavar="FILE",
                   help="a `promptspec verify --out` report: adds the Conformance page to the site and its nav")
    q.add_argument("--history", action="append", default=[], metavar="SIDE",
                   help="a release of the History section (repeat, oldest first; as for `promptspec history`): adds it to the nav")
    q.set_defaults(func=commands.cmd_site_init)
    t = sub.add_parser("init", help="start a team's own spec: DIR/templates/ (a copy of the example), mkdocs.yml and docs/")
    t.add_argument("dir", type=Path, metavar="DIR", help="a new or empty folder (typically your repository)")
    t.set_defaults(func=commands.cmd_init)

    p = sub.add_parser("lint", help="check the spec against the lint rules (docs/guide/lint-rules.md)", parents=[verbose])
    spec_arg(p)
    p.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text", help=FINDINGS_FORMATS)
    p.add_argument("--strict", action="store_true", help="treat warnings as errors (exit 1)")
    p.set_defaults(func=commands.cmd_lint)

    p = sub.add_parser("new", help="start a fragment, mode or personality from a lint-clean skeleton")
    new_sub = p.add_subparsers(dest="kind", metavar="KIND")
    new_sub.required = True
    q = new_sub.add_parser("fragment", help="write fragments/NAME.yaml and fragments/NAME.md")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--role", choices=("developer", "user"), required=True)
    q.add_argument("--slot", help="layout slot (default: developer_extensions or user_extensions)")
    q.add_argument("--description", help="the fragment's description")
    spec_arg(q)
    q.set_defaults(func=commands.cmd_new)
    for kind, folder in (("mode", "modes"), ("personality", "personalities")):
        q = new_sub.add_parser(kind, help=f"write {folder}/NAME.md and add NAME to spec.yaml's {folder}:")
        q.add_argument("name", metavar="NAME")
        q.add_argument("--description", help=f"the {kind}'s description")
        spec_arg(q)
        q.set_defaults(func=commands.cmd_new)

    review_spec_help = SPEC_HELP + "; for revisions, its path in the repository"
    p = sub.add_parser("diff", help="what a spec change does to every variant (git revisions or spec folders)", parents=[verbose])
    p.add_argument("base", metavar="BASE", help="git revision (origin/main, or rev:NAME) or spec folder written as a path (./DIR, DIR/, or dir:DIR)")
    p.add_argument("head", metavar="HEAD", nargs="?", default=None, help="git revision or spec folder, as for BASE (default: the working tree)")
    p.add_argument("--spec", type=Path, default=None, metavar="DIR", help=review_spec_help)
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.add_argument("--budget", type=int, default=None, metavar="N", help="flag variants whose total goes over N tokens")
    p.add_argument("--max-chars", type=int, default=60000, metavar="N", help="markdown size cap (default 60000; GitHub comments hold 65536)")
    p.add_argument("--fail-on-increase", default=None, metavar="N[%]", help="exit 1 if any variant's total grows by more than N tokens (or N%%)")
    p.add_argument("--fail-on-budget", action="store_true",
                   help="exit 1 when a variant newly goes over --budget or past its auto-compaction limit (spec.yaml budgets: always gate)")
    p.set_defaults(func=commands.cmd_diff)

    p = sub.add_parser("compare", help="what one variant sends that another does not, section by section", parents=[verbose])
    p.add_argument("a", metavar="A", help="a variant id, e.g. harbor-5/pragmatic/default/workspace-write")
    p.add_argument("b", metavar="B", help="another variant id, or AXIS=VALUE[,AXIS=VALUE] to change A's values (e.g. personality=friendly)")
    p.add_argument("--spec", type=Path, default=None, metavar="DIR", help=review_spec_help)
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.set_defaults(func=commands.cmd_compare)
    p = sub.add_parser("history", help="what each release did to every assembled request (a series of revisions, folders or locks)", parents=[verbose])
    p.add_argument("sides", nargs="+", metavar="SIDE",
                   help="in release order: a git revision or tag, dir:PATH (a spec folder) or lock:PATH (a lock file), "
                        "each optionally followed by ,label=NAME and ,date=YYYY-MM-DD (docs/history.md)")
    p.add_argument("--spec", type=Path, default=None, metavar="DIR", help=review_spec_help)
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.add_argument("--max-chars", type=int, default=None, metavar="N",
                   help="markdown size cap (default: 60000 on standard output, as GitHub comments hold 65536; none with --out)")
    p.add_argument("--out", type=Path, default=None, metavar="FILE", help="write the report to FILE instead of standard output (markdown: whole, not cut)")
    p.set_defaults(func=commands.cmd_history)

    for name, help_text in (("lock", "write prompts.lock.json: a hash and token counts of every variant"), ("check", "exit 1 if the spec no longer matches prompts.lock.json")):
        p = sub.add_parser(name, help=help_text, parents=[verbose])
        p.add_argument("--spec", type=Path, default=None, metavar="DIR", help=review_spec_help)
        p.add_argument("--lock", type=Path, default=None, metavar="PATH", help="lock file (default: prompts.lock.json in the spec folder)")
        if name == "check":
            p.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text", help=FINDINGS_FORMATS)
        p.set_defaults(func=commands.cmd_lock if name == "lock" else commands.cmd_check)

    from .editor import add_commands

    add_commands(sub, build_parser)  # schema, completion

    return parser


