#!/usr/bin/env python3
"""Keep ONE pull-request comment holding the promptspec report: create it the
first time, edit it on every later run, never pile up a second one.

Standard library only, so it runs on any runner without installing anything.
Used by ../action.yml in the pull request's own job, or (for pull requests
from forks) by a separate `workflow_run` job that has a write token but never
runs the fork's code (see docs/review.md).

    python comment.py --event "$GITHUB_EVENT_PATH" --report prompt-diff.md
    python comment.py --repo OWNER/NAME --pr-file pr-number.txt --head-sha SHA --report prompt-diff.md

The token comes from the environment (GITHUB_TOKEN), never from arguments.
Requests are bounded (page count, timeouts), the API URL must be https (or a
loopback stub for tests) and redirects are refused, so the token goes to that
origin only; and the comment we edit is found by its hidden marker AND its
author (`--author`, else the token's own login from `GET /user`, else
github-actions[bot]), so nobody can make us overwrite their comment.

The report and the number are untrusted data (an artifact of the pull
request's run, or a path in its checkout): they are opened without following
symlinks, regular files only, bounded.  The report is posted as Markdown only
if util/gh_markdown's `live_elements` finds nothing GitHub would make live in
it (no mention, reference, autolink, image, link, foreign HTML or open fence:
what promptspec writes); otherwise a fixed note saying what was found takes
its place.  That module is read from the action's own checkout
(standard library only), never from the pull request.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generator"))
from promptspec.util import gh_markdown  # noqa: E402 (the action's own copy, standard library only)

MARKER = "<!-- promptspec-diff -->"
MAX_BODY = 65536  # GitHub refuses longer comments
MAX_PAGES = 30  # 3000 comments: far more than any pull request needs
TIMEOUT = 30
DEFAULT_AUTHOR = "github-actions[bot]"


class Failure(Exception):
    """A one-line reason the comment could not be posted."""


def api_base(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
        raise Failure(f"refusing API URL {url!r}: it must be https")
    return url.rstrip("/")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """urllib would resend the Authorization header to wherever a redirect points
    (another host, plain http): the API answers these calls without one, so any is refused."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001
        raise Failure(f"{req.get_method()} {urllib.parse.urlsplit(req.full_url).path}: refusing a redirect (HTTP {code})")


_OPENER = urllib.request.build_opener(_NoRedirect)


class Api:
    def __init__(self, base: str, token: str):
        self.base = api_base(base)
        self.token = token

    def call(self, method: str, path: str, body: dict | None = None) -> object:
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Accept", "application/vnd.github+json")
        req.add_header("X-GitHub-Api-Version", "2022-11-28")
        req.add_header("User-Agent", "promptspec-action")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with _OPENER.open(req, timeout=TIMEOUT) as resp:  # noqa: S310 (scheme checked in api_base, no redirects)
                raw = resp.read(16 * 1024 * 1024)
        except urllib.error.HTTPError as exc:
            hint = " (a pull request from a fork gets a read-only token: post from a workflow_run job, see docs/review.md)" if exc.code in (403, 404) else ""
            raise Failure(f"{method} {path}: HTTP {exc.code}{hint}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise Failure(f"{method} {path}: {getattr(exc, 'reason', exc)}") from None
        return json.loads(raw.decode("utf-8")) if raw else None


def find_comment(api: Api, repo: str, number: int, author: str) -> dict | None:
    for page in range(1, MAX_PAGES + 1):
        batch = api.call("GET", f"/repos/{repo}/issues/{number}/comments?per_page=100&page={page}")
        if not isinstance(batch, list):
            raise Failure("unexpected answer listing comments")
        for c in batch:
            user = c.get("user") or {}
            if str(c.get("body", "")).startswith(MARKER) and user.get("login") == author:
                return c
        if len(batch) < 100:
            return None
    return None


def whoami(api: Api) -> str | None:
    """The token's own login (a personal access token's user); None for the
    installation tokens of GitHub Actions and Apps, which `GET /user` refuses."""
    try:
        me = api.call("GET", "/user")
    except Failure:
        return None
    login = me.get("login") if isinstance(me, dict) else None
    return login if isinstance(login, str) and login else None


def read_untrusted(path: str, limit: int) -> str:
    """A file the pull request may control: not through a symlink, a regular
    file only (no FIFO, device or /proc file), at most `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        why = "it is a symlink" if exc.errno in (40, 62) or os.path.islink(path) else (exc.strerror or str(exc))
        raise Failure(f"cannot read {path}: {why}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise Failure(f"cannot read {path}: not a regular file")
        return fh.read(limit).decode("utf-8", "replace")


def not_posted(why: str) -> str:
    """The fixed note that takes the place of a report we cannot vouch for (`why` escaped)."""
    return ("### promptspec: the report was not posted\n\n"
            f"The report from the pull request's run {gh_markdown.md_escape(why)}, so it may not come from promptspec. "
            "Read it in that run's job summary, or run `promptspec diff` locally.\n")


def inert(report: str) -> str:
    """`report` if GitHub would render nothing live from it; else the note,
    saying what was found, and none of the report's text."""
    live = gh_markdown.live_elements(report)
    if not live:
        return report
    return not_posted(f"holds Markdown that promptspec does not write ({'; '.join(live[:3])})")


def body_of(report: str) -> str:
    text = f"{MARKER}\n{inert(report)}"
    if len(text) > MAX_BODY:
        note = "\n\n> Cut to fit GitHub's comment size; run `promptspec diff` locally for everything.\n"
        text = text[: MAX_BODY - len(note)] + note
    return text


def upsert(api: Api, repo: str, number: int, report: str, author: str = DEFAULT_AUTHOR) -> tuple[str, int]:
    """("created" | "updated" | "unchanged", comment id)."""
    body = body_of(report)
    found = find_comment(api, repo, number, author)
    if found is None:
        made = api.call("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})
        return "created", int(made["id"])  # type: ignore[index]
    if found.get("body") == body:
        return "unchanged", int(found["id"])
    api.call("PATCH", f"/repos/{repo}/issues/comments/{int(found['id'])}", {"body": body})
    return "updated", int(found["id"])


REPO_RE = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")


def target_from_event(event: dict) -> tuple[str, int]:
    repo = (event.get("repository") or {}).get("full_name")
    pr = event.get("pull_request") or {}
    number = pr.get("number", event.get("number"))
    if not isinstance(repo, str) or not REPO_RE.match(repo) or not isinstance(number, int) or number <= 0:
        raise Failure("the event is not a pull_request event (no repository.full_name / pull_request.number)")
    return repo, number


def read_pr_number(path: str) -> int:
    """The number an untrusted job wrote: digits only, bounded."""
    text = read_untrusted(path, 32).strip()
    if not re.fullmatch(r"[0-9]{1,9}", text) or int(text) <= 0:
        raise Failure(f"{path} does not hold a pull request number")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="create or update the promptspec comment on a pull request")
    p.add_argument("--report", required=True, help="the markdown report (promptspec diff --format markdown)")
    p.add_argument("--event", help="a pull_request event payload (GITHUB_EVENT_PATH)")
    p.add_argument("--repo", help="OWNER/NAME (with --pr-file, in a workflow_run job)")
    p.add_argument("--pr-file", help="a file holding the pull request number (an artifact of the untrusted job)")
    p.add_argument("--head-sha", help="with --pr-file: the commit the untrusted job ran on; the pull request's head must be it")
    p.add_argument("--author", default=os.environ.get("PROMPTSPEC_COMMENT_AUTHOR") or None,
                   help=f"login that owns the comment (default: the token's user, else {DEFAULT_AUTHOR})")
    args = p.parse_args(argv)
    try:
        if args.event:
            repo, number = target_from_event(json.loads(read_untrusted(args.event, 64 * 1024 * 1024)))
        elif args.repo and args.pr_file:
            if not REPO_RE.match(args.repo):
                raise Failure(f"--repo {args.repo!r} is not OWNER/NAME")
            repo, number = args.repo, read_pr_number(args.pr_file)
        else:
            raise Failure("pass --event, or --repo with --pr-file")
        try:
            report = read_untrusted(args.report, MAX_BODY * 4)
        except Failure as exc:
            if not os.path.lexists(args.report):
                raise
            print(f"promptspec-comment: {exc}; posting a note instead", file=sys.stderr)
            report = not_posted(f"could not be read safely ({exc})")
        if not report.strip():
            print("promptspec-comment: empty report (the diff failed?); nothing posted", file=sys.stderr)
            return 0
        api = Api(os.environ.get("GITHUB_API_URL", "https://api.github.com"), os.environ.get("GITHUB_TOKEN", ""))
        if args.pr_file and args.head_sha:
            pr = api.call("GET", f"/repos/{repo}/pulls/{number}")
            if not isinstance(pr, dict) or (pr.get("head") or {}).get("sha") != args.head_sha:
                raise Failure(f"pull request #{number} is not at {args.head_sha}: not posting")
        what, cid = upsert(api, repo, number, report, args.author or whoami(api) or DEFAULT_AUTHOR)
    except (Failure, OSError, ValueError) as exc:
        print(f"promptspec-comment: error: {exc}", file=sys.stderr)
        return 2
    print(f"promptspec-comment: {what} comment {cid} on {repo}#{number}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
