"""The GitHub Action's comment script (action/comment.py), offline: a recorded
`pull_request` payload and a stub of the comments API on 127.0.0.1.

The script runs as the runner runs it (a subprocess, its own interpreter);
the stub keeps comments in memory, so the tests check what a pull request
would show: one comment, created once, edited afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "action" / "comment.py"
EVENT = Path(__file__).resolve().parent / "pull_request.json"
REPO = "harbor-dev/agent-prompts"
BOT = "github-actions[bot]"


class Stub:
    """Just enough of the REST API: list/create/edit issue comments, get a pull."""

    def __init__(self) -> None:
        self.comments: list[dict] = []
        self.requests: list[tuple[str, str, dict | None, str]] = []  # (method, path, body, authorization)
        self.head_sha = "6026dde0c5a4e1f0b3c2d1e0f9a8b7c6d5e4f3a2"
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def _body(self) -> dict | None:
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n)) if n else None

            def _send(self, code: int, data: object) -> None:
                raw = json.dumps(data).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _handle(self, method: str) -> None:
                url = urlsplit(self.path)
                body = self._body() if method in ("POST", "PATCH") else None
                stub.requests.append((method, url.path, body, self.headers.get("Authorization", "")))
                parts = url.path.strip("/").split("/")
                if parts[:3] != ["repos", *REPO.split("/")]:
                    return self._send(404, {"message": "Not Found"})
                rest = parts[3:]
                if method == "GET" and rest[:1] == ["issues"] and rest[2:] == ["comments"]:
                    q = parse_qs(url.query)
                    per, page = int(q.get("per_page", ["30"])[0]), int(q.get("page", ["1"])[0])
                    return self._send(200, stub.comments[(page - 1) * per: page * per])
                if method == "POST" and rest[:1] == ["issues"] and rest[2:] == ["comments"]:
                    c = {"id": 1000 + len(stub.comments), "body": body["body"], "user": {"login": BOT, "type": "Bot"}}
                    stub.comments.append(c)
                    return self._send(201, c)
                if method == "PATCH" and rest[:2] == ["issues", "comments"]:
                    for c in stub.comments:
                        if c["id"] == int(rest[2]):
                            c["body"] = body["body"]
                            return self._send(200, c)
                    return self._send(404, {"message": "Not Found"})
                if method == "GET" and rest[:1] == ["pulls"]:
                    return self._send(200, {"number": int(rest[1]), "head": {"sha": stub.head_sha}})
                return self._send(404, {"message": "Not Found"})

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def writes(self) -> list[tuple[str, str]]:
        return [(m, p) for m, p, _, _ in self.requests if m in ("POST", "PATCH")]


@pytest.fixture
def stub():
    s = Stub()
    s.thread.start()
    try:
        yield s
    finally:
        s.server.shutdown()
        s.server.server_close()


def post(stub: Stub, report: Path, *args: str) -> subprocess.CompletedProcess:
    # A subprocess on purpose: the action runs the script as its own process, with its environment.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(GITHUB_API_URL=stub.url, GITHUB_TOKEN="test-token")
    return subprocess.run([sys.executable, str(SCRIPT), "--report", str(report), *args],
                          capture_output=True, text=True, env=env, timeout=60)


def test_posts_one_comment_then_edits_it(stub: Stub, tmp_path: Path) -> None:
    report = tmp_path / "prompt-diff.md"
    report.write_text("### promptspec: prompt changes\n\nfirst run\n", encoding="utf-8")
    first = post(stub, report, "--event", str(EVENT))
    assert first.returncode == 0, first.stderr
    assert "created comment 1000 on harbor-dev/agent-prompts#42" in first.stdout
    assert stub.writes() == [("POST", f"/repos/{REPO}/issues/42/comments")]
    assert all(auth == "Bearer test-token" for *_, auth in stub.requests)

    report.write_text("### promptspec: prompt changes\n\nsecond run\n", encoding="utf-8")
    second = post(stub, report, "--event", str(EVENT))
    assert second.returncode == 0, second.stderr
    assert "updated comment 1000" in second.stdout
    assert stub.writes()[1:] == [("PATCH", f"/repos/{REPO}/issues/comments/1000")]
    assert len(stub.comments) == 1
    assert stub.comments[0]["body"].startswith("<!-- promptspec-diff -->\n") and "second run" in stub.comments[0]["body"]

    third = post(stub, report, "--event", str(EVENT))  # nothing new: no write at all
    assert third.returncode == 0 and "unchanged comment 1000" in third.stdout
    assert len(stub.writes()) == 2 and len(stub.comments) == 1


def test_never_edits_someone_elses_comment(stub: Stub, tmp_path: Path) -> None:
    stub.comments.append({"id": 7, "body": "<!-- promptspec-diff -->\nlooks like ours", "user": {"login": "contributor", "type": "User"}})
    report = tmp_path / "r.md"
    report.write_text("report\n", encoding="utf-8")
    out = post(stub, report, "--event", str(EVENT))
    assert out.returncode == 0, out.stderr
    assert stub.writes() == [("POST", f"/repos/{REPO}/issues/42/comments")]
    assert stub.comments[0]["body"].endswith("looks like ours")


def test_finds_its_comment_on_a_later_page(stub: Stub, tmp_path: Path) -> None:
    stub.comments += [{"id": i, "body": f"chatter {i}", "user": {"login": "someone"}} for i in range(1, 131)]
    stub.comments.append({"id": 500, "body": "<!-- promptspec-diff -->\nold", "user": {"login": BOT}})
    report = tmp_path / "r.md"
    report.write_text("new\n", encoding="utf-8")
    assert post(stub, report, "--event", str(EVENT)).returncode == 0
    assert stub.writes() == [("PATCH", f"/repos/{REPO}/issues/comments/500")]


def test_workflow_run_mode_checks_the_head_commit(stub: Stub, tmp_path: Path) -> None:
    """The trusted job reads the number from the untrusted job's artifact and posts only if the PR is at that commit."""
    report, number = tmp_path / "r.md", tmp_path / "pr-number.txt"
    report.write_text("report\n", encoding="utf-8")
    number.write_text("42\n", encoding="utf-8")
    ok = post(stub, report, "--repo", REPO, "--pr-file", str(number), "--head-sha", stub.head_sha)
    assert ok.returncode == 0, ok.stderr
    assert len(stub.comments) == 1
    stale = post(stub, report, "--repo", REPO, "--pr-file", str(number), "--head-sha", "0" * 40)
    assert stale.returncode == 2 and "not posting" in stale.stderr
    number.write_text("42; rm -rf /\n", encoding="utf-8")
    bad = post(stub, report, "--repo", REPO, "--pr-file", str(number))
    assert bad.returncode == 2 and "does not hold a pull request number" in bad.stderr
    assert len(stub.writes()) == 1


def test_refuses_plain_http_to_a_real_host(tmp_path: Path) -> None:
    report = tmp_path / "r.md"
    report.write_text("report\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(GITHUB_API_URL="http://api.example.invalid", GITHUB_TOKEN="t")
    out = subprocess.run([sys.executable, str(SCRIPT), "--report", str(report), "--event", str(EVENT)],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2 and "must be https" in out.stderr


def test_a_huge_report_is_cut_to_githubs_limit(stub: Stub, tmp_path: Path) -> None:
    report = tmp_path / "r.md"
    report.write_text("x" * 200_000, encoding="utf-8")
    assert post(stub, report, "--event", str(EVENT)).returncode == 0
    assert len(stub.comments[0]["body"]) <= 65536 and "Cut to fit" in stub.comments[0]["body"]


def test_action_yml_is_a_composite_action_that_passes_values_through_env() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    assert {"spec", "fail-on-increase", "fail-on-budget", "comment", "github-token"} <= set(action["inputs"])
    for step in action["runs"]["steps"]:
        # No ${{ }} inside a script: inputs and event fields go through env.
        assert "${{" not in step.get("run", ""), step["name"]
    runs = " ".join(step.get("run", "") for step in action["runs"]["steps"])
    assert "promptspec" in runs and "action/comment.py" in runs and "--format markdown" in runs
