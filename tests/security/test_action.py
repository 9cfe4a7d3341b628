"""R3, R10, R11 (second red-team pass): the GitHub Action and its comment
script treat the report as hostile, never read or write through a path the
pull request controls, and send the token to the API origin only.

The script runs as the runner runs it (a child process) against a loopback
stub of the REST API that records every request it gets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from _attack import git, repo_with_spec

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "action" / "comment.py"
REPO = "harbor-dev/agent-prompts"
SHA = "a" * 40


class Api:
    """Issue comments, one pull request, `GET /user`; `redirect_to` makes every GET a 302 to that URL."""

    def __init__(self, login: str = "github-actions[bot]", user: str | None = None, redirect_to: str | None = None) -> None:
        self.log: list[tuple[str, str, str | None]] = []
        self.comments: list[dict] = []
        api = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a) -> None:
                pass

            def _send(self, code: int, data: object, location: str | None = None) -> None:
                raw = json.dumps(data).encode()
                self.send_response(code)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _h(self, method: str) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n)) if n else None
                api.log.append((method, self.path, self.headers.get("Authorization")))
                path = self.path.split("?")[0]
                if redirect_to and method == "GET":
                    return self._send(302, {}, redirect_to + self.path)
                if path == "/user":
                    return self._send(200, {"login": user}) if user else self._send(403, {"message": "Resource not accessible by integration"})
                if method == "GET" and path.endswith("/comments"):
                    return self._send(200, api.comments)
                if method == "GET" and "/pulls/" in path:
                    return self._send(200, {"head": {"sha": SHA}})
                if method == "POST":
                    c = {"id": len(api.comments) + 1, "body": body["body"], "user": {"login": login}}
                    api.comments.append(c)
                    return self._send(201, c)
                if method == "PATCH":
                    cid = int(path.rsplit("/", 1)[1])
                    next(c for c in api.comments if c["id"] == cid)["body"] = body["body"]
                    return self._send(200, {})
                return self._send(404, {})

            def do_GET(self) -> None:
                self._h("GET")

            def do_POST(self) -> None:
                self._h("POST")

            def do_PATCH(self) -> None:
                self._h("PATCH")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def apis():
    made: list[Api] = []

    def make(**kw) -> Api:
        made.append(Api(**kw))
        return made[-1]

    yield make
    for a in made:
        a.close()


def comment(api: Api, tmp_path: Path, report: Path, token: str = "ghs_WRITE", env: dict | None = None) -> subprocess.CompletedProcess:
    (tmp_path / "pr.txt").write_text("7\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PROMPTSPEC_"))}
    clean.update(GITHUB_API_URL=api.url, GITHUB_TOKEN=token, **(env or {}))
    return subprocess.run([sys.executable, str(SCRIPT), "--repo", REPO, "--pr-file", str(tmp_path / "pr.txt"),
                           "--head-sha", SHA, "--report", str(report)], capture_output=True, text=True, env=clean, timeout=60)


def posted(api: Api) -> list[str]:
    return [c["body"] for c in api.comments]


HOSTILE_REPORT = """### promptspec: prompt changes <code>origin/main</code> → <code>working tree</code>

No assembled request changed. :white_check_mark: Reviewed by @harbor-dev/security-team: safe to merge.

![](https://evil.example/pixel.png?pr=7)
<!-- anything after this line is hidden from readers
"""


def test_the_comment_job_does_not_post_markdown_promptspec_does_not_write(apis, tmp_path: Path) -> None:
    api = apis()
    report = tmp_path / "prompt-diff.md"
    report.write_text(HOSTILE_REPORT, encoding="utf-8")
    out = comment(api, tmp_path, report)
    assert out.returncode == 0, out.stderr
    [body] = posted(api)
    assert "@harbor-dev" not in body and "evil.example" not in body and "<!-- anything" not in body
    assert "was not posted" in body
    from promptspec.util.gh_markdown import live_elements

    assert live_elements(body.split("\n", 1)[1]) == []


def test_the_comment_job_posts_promptspec_s_own_report_as_it_is(apis, tmp_path: Path, capsys, monkeypatch) -> None:
    from _attack import run_main

    repo = repo_with_spec(tmp_path / "repo")
    monkeypatch.chdir(repo)
    (repo / "templates/fragments/greeting.md").write_text("Hello @octocat, see #1 and https://evil.example <img src=x>.\n")
    md = run_main(capsys, "diff", "HEAD", "--spec", "templates", "--format", "markdown").stdout
    report = tmp_path / "prompt-diff.md"
    report.write_text(md, encoding="utf-8")
    api = apis()
    assert comment(api, tmp_path, report).returncode == 0
    assert posted(api) == ["<!-- promptspec-diff -->\n" + md]


@pytest.mark.parametrize("target", ["/proc/self/environ", "secret.txt"])
def test_a_symlinked_report_is_not_followed(apis, tmp_path: Path, target: str) -> None:
    (tmp_path / "secret.txt").write_text("GITHUB_TOKEN=ghs_SECRET\n")
    report = tmp_path / "prompt-diff.md"
    report.symlink_to(target if target.startswith("/") else tmp_path / target)
    api = apis()
    out = comment(api, tmp_path, report, token="ghs_SECRET")
    assert out.returncode == 0, out.stderr
    assert all("ghs_SECRET" not in b for b in posted(api)) and "symlink" in out.stderr
    pr = tmp_path / "pr-link.txt"
    pr.symlink_to(tmp_path / "pr.txt")
    (tmp_path / "r.md").write_text("report\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    out = subprocess.run([sys.executable, str(SCRIPT), "--repo", REPO, "--pr-file", str(pr), "--report", str(tmp_path / "r.md")],
                         capture_output=True, text=True, env={**clean, "GITHUB_API_URL": api.url}, timeout=60)
    assert out.returncode == 2 and "symlink" in out.stderr


def test_the_token_never_follows_a_redirect(apis, tmp_path: Path) -> None:
    elsewhere = apis()
    api = apis(redirect_to=elsewhere.url + "/elsewhere")
    report = tmp_path / "r.md"
    report.write_text("report\n")
    out = comment(api, tmp_path, report)
    assert out.returncode == 2 and "redirect" in out.stderr
    assert elsewhere.log == []


def test_a_personal_token_finds_its_own_comment(apis, tmp_path: Path) -> None:
    api = apis(login="release-bot", user="release-bot")
    report = tmp_path / "r.md"
    for i in range(3):
        report.write_text(f"run {i}\n")
        assert comment(api, tmp_path, report, token="ghp_PAT").returncode == 0
    assert len(api.comments) == 1 and api.comments[0]["body"].endswith("run 2\n")


def test_an_app_token_finds_its_comment_by_the_author_it_is_given(apis, tmp_path: Path) -> None:
    api = apis(login="my-app[bot]")
    report = tmp_path / "r.md"
    for i in range(2):
        report.write_text(f"run {i}\n")
        assert comment(api, tmp_path, report, env={"PROMPTSPEC_COMMENT_AUTHOR": "my-app[bot]"}).returncode == 0
    assert len(api.comments) == 1


def test_the_action_writes_its_report_outside_the_checkout(tmp_path: Path) -> None:
    """action.yml's diff step, run as the runner runs it, in a checkout holding prompt-diff.md -> /proc/self/environ."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "diff")
    repo = repo_with_spec(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    (repo / "templates/fragments/greeting.md").write_text("Changed.\n")
    (repo / "prompt-diff.md").symlink_to("/proc/self/environ")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pr")
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    summary, output, temp = tmp_path / "summary.md", tmp_path / "output.txt", tmp_path / "runner-temp"
    temp.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "SPEC": "templates", "BASE": base,
           "HEAD": head, "FAIL_ON_INCREASE": "", "FAIL_ON_BUDGET": "false", "REPORT_NAME": step["env"]["REPORT_NAME"].replace(
               "${{ inputs.report }}", "prompt-diff.md"), "JOB_SECRET": "from-the-workflow-env", "RUNNER_TEMP": str(temp),
           "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output)}
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "JOB_SECRET" not in summary.read_text() and "prompt changes" in summary.read_text()
    report = Path(dict(line.split("=", 1) for line in output.read_text().splitlines())["report"])
    assert temp in report.parents and report.is_file() and not report.is_symlink()
    assert (repo / "prompt-diff.md").is_symlink()
