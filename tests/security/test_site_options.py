"""R16 (second red-team pass): every plugin option is loaded and checked
before MkDocs cleans site_dir.  `base`, `history` and `conformance` used to be
loaded after the clean, so any of them failing took the published site to 0
files; a deeply nested conformance report ended the build in a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from _attack import small_spec

GOOD_REPORT = ('{"kind":"promptspec-verify-report","version":1,"codex_release":"0.125.0","spec":"t","date":"2026-01-01",'
               '"matrix_size":1,"compared":1,"identical":1,"not_modelled":[],"variants":[{"id":"m1/default/default","identical":true}]}')


def _files(site: Path) -> list[Path]:
    return sorted(p.relative_to(site) for p in site.rglob("*") if p.is_file())


@pytest.mark.slow
@pytest.mark.parametrize("option, value, report, says", [
    ("conformance", "report.json", '{"kind": "promptspec-verify-report", "variants": 5', "not a promptspec verify report"),
    ("conformance", "report.json", "[" * 100_000 + "]" * 100_000, "nests too deeply"),
    ("history", ["dir:s", "dir:nope"], GOOD_REPORT, "option 'history'"),
    ("base", "no-such-revision", GOOD_REPORT, "promptspec: error:"),
])
def test_a_bad_option_fails_with_the_previous_site_in_place(tmp_path: Path, option: str, value, report: str, says: str) -> None:
    from _helpers import build_ok, mkdocs_build, mkdocs_config

    spec = small_spec(tmp_path / "s")
    (tmp_path / "report.json").write_text(GOOD_REPORT)
    good = {"conformance": "report.json"} if option == "conformance" else {}
    site = build_ok(mkdocs_config(tmp_path, spec, **good))
    before = _files(site)
    assert len(before) > 10
    (tmp_path / "report.json").write_text(report)
    proc = mkdocs_build(mkdocs_config(tmp_path, spec, **{option: value}))
    assert proc.returncode != 0 and says in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert _files(site) == before
