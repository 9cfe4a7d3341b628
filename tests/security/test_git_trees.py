"""F2, F3, F10: a side of a review read from git.  The revision may be a
pull request's branch, crafted object by object, so materialising it never
writes through a symlink, refuses trees no checkout could have, and checks
blob sizes before reading them; and a folder never stands in for a revision."""

from __future__ import annotations

import binascii
import shutil
from pathlib import Path

import pytest

from _attack import cli, git, one_error_line, repo_with_spec
from required import needs

pytestmark = needs(shutil.which("git"), "`git` is not on PATH (apt-get install git)")


def _crafted_branch(repo: Path, entries: list[tuple[bytes, bytes, bytes]]) -> None:
    """Branch `evil`: main with extra raw entries (mode, name, content) appended to templates/'s tree."""
    raw = git(repo, "cat-file", "tree", git(repo, "rev-parse", "main:templates").decode().strip())
    for mode, name, content in entries:
        obj = git(repo, "hash-object", "-w", "--stdin", stdin=content).decode().strip()
        raw += mode + b" " + name + b"\0" + binascii.unhexlify(obj)
    tpl = git(repo, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", stdin=raw).decode().strip()
    top = git(repo, "cat-file", "tree", "main^{tree}")
    i = top.index(b"templates\0") + len(b"templates\0")
    root = git(repo, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", stdin=top[:i] + binascii.unhexlify(tpl) + top[i + 20 :]).decode().strip()
    commit = git(repo, "commit-tree", root, "-p", "main", "-m", "x").decode().strip()
    git(repo, "update-ref", "refs/heads/evil", commit)


@pytest.mark.parametrize("order", ["link-then-file", "file-then-link"])
def test_duplicate_tree_entries_never_write_outside(tmp_path: Path, order: str) -> None:
    """F2: a symlink then a blob of the same name wrote (and chmod 755) through the link."""
    repo = repo_with_spec(tmp_path / "repo")
    victim = tmp_path / "victim.txt"
    victim.write_text("original\n")
    hook = repo / ".git" / "hooks" / "post-checkout"
    link = (b"120000", b"zz.sh", str(hook).encode())
    body = (b"100755", b"zz.sh", b"#!/bin/sh\necho HOOK-RAN\n")
    over = (b"120000", b"zv.md", str(victim).encode()), (b"100644", b"zv.md", b"PWNED\n")
    _crafted_branch(repo, [link, body, *over] if order == "link-then-file" else [body, link, *reversed(over)])
    for args in (("diff", "main", "evil"), ("diff", "evil")):
        line = one_error_line(cli(*args, "--spec", str(repo / "templates"), cwd=repo))
        assert "twice" in line
    assert not hook.exists()
    assert victim.read_text() == "original\n"


def test_a_name_that_is_a_file_and_a_folder_is_refused(tmp_path: Path) -> None:
    repo = repo_with_spec(tmp_path / "repo")
    sub = git(repo, "mktree", stdin=b"100644 blob " + git(repo, "hash-object", "-w", "--stdin", stdin=b"x\n").strip() + b"\tinner.md\n").strip()
    raw = git(repo, "cat-file", "tree", git(repo, "rev-parse", "main:templates").decode().strip())
    blob = git(repo, "hash-object", "-w", "--stdin", stdin=b"/etc\n").decode().strip()
    raw += b"120000 dir\0" + binascii.unhexlify(blob) + b"40000 dir\0" + binascii.unhexlify(sub.decode())
    tpl = git(repo, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", stdin=raw).decode().strip()
    top = git(repo, "cat-file", "tree", "main^{tree}")
    i = top.index(b"templates\0") + len(b"templates\0")
    root = git(repo, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", stdin=top[:i] + binascii.unhexlify(tpl) + top[i + 20 :]).decode().strip()
    git(repo, "update-ref", "refs/heads/evil", git(repo, "commit-tree", root, "-p", "main", "-m", "x").decode().strip())
    line = one_error_line(cli("diff", "main", "evil", "--spec", str(repo / "templates"), cwd=repo))
    assert "both a file and a folder" in line or "twice" in line


def test_oversized_blob_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """F10: a 400 MB blob (2 MB in .git) cost 811 MB RSS.  Here 20 MB of zeros,
    under the child's 1 GB limit either way: the point is the refusal."""
    repo = repo_with_spec(tmp_path / "repo")
    big = repo / "templates" / "big.bin"
    with open(big, "wb") as fh:
        fh.write(bytes(20 * 1024 * 1024))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "big")
    line = one_error_line(cli("diff", "HEAD~1", "HEAD", "--spec", str(repo / "templates"), cwd=repo))
    assert "big.bin" in line and "byte limit" in line


def test_a_folder_named_like_the_base_revision_is_not_used_silently(tmp_path: Path) -> None:
    """F3: a PR that adds `origin/main/` made `diff origin/main --fail-on-increase` compare the PR with itself."""
    repo = repo_with_spec(tmp_path / "repo")
    git(repo, "update-ref", "refs/remotes/origin/main", "main")
    spec = repo / "templates"
    (spec / "fragments" / "greeting.md").write_text("Hello {{ who }}. " + "Much longer now. " * 200 + "\n")
    honest = cli("diff", "origin/main", "--spec", str(spec), "--fail-on-increase", "10%", cwd=repo)
    assert honest.returncode == 1, honest.stderr
    shutil.copytree(spec, repo / "origin" / "main")  # what the PR adds
    line = one_error_line(cli("diff", "origin/main", "--spec", str(spec), "--fail-on-increase", "10%", cwd=repo))
    assert "ambiguous" in line
    # Explicit either way: the revision is still the gate; the folder is a folder.
    assert cli("diff", "rev:origin/main", "--spec", str(spec), "--fail-on-increase", "10%", cwd=repo).returncode == 1
    assert cli("diff", "./origin/main", "--spec", str(spec), "--fail-on-increase", "10%", cwd=repo).returncode == 0
    assert cli("diff", "dir:origin/main", "--spec", str(spec), "--fail-on-increase", "10%", cwd=repo).returncode == 0


def test_site_base_follows_the_same_rule(tmp_path: Path) -> None:
    from promptspec import pipeline
    from promptspec.errors import UsageError
    from promptspec.site.base import BaseLoader

    repo = repo_with_spec(tmp_path / "repo")
    shutil.copytree(repo / "templates", repo / "main")
    # The folder differs from the revision, so which of the two was read shows in the comparison.
    (repo / "main" / "fragments" / "greeting.md").write_text("Goodbye {{ who }}.\n", encoding="utf-8")
    head = pipeline.run(repo / "templates")
    ids = {v.id for v in head.variants}
    with pytest.raises(UsageError, match="ambiguous"):
        BaseLoader().load("main", repo / "templates", head, root=repo)
    revision = BaseLoader().load("rev:main", repo / "templates", head, root=repo)
    assert revision.kind == "git" and set(revision.diff.unchanged) == ids and not revision.diff.changed  # the commit: as head
    assert revision.label.startswith("main")
    folder = BaseLoader().load("./main", repo / "templates", head, root=repo)
    assert folder.kind == "git" and {d.id for d in folder.diff.changed} == ids and not folder.diff.unchanged  # the edited folder
