"""The site's History section: a timeline page and a page per step.

Built by real MkDocs (strict) from the three-tag scratch repository of
history_repo.py, with the plugin option `history:`; the timeline page is then
opened in headless Chromium with every host but the local server
unresolvable, in the light and the dark (slate) colour scheme.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from pathlib import Path

import pytest

from promptspec import pipeline
from promptspec.measure.counter import TokenCounter
from promptspec.review.history import compare as history
from promptspec.review.history import series
from promptspec.site.build import build_site
from promptspec.site.pages.history_pages import parse_option, traces

from _helpers import build_ok, mkdocs_config
from history_repo import REALTIME_LINE, make_repo
from required import browser

HISTORY = ["v1", {"side": "v2", "label": "2.0", "date": "2026-03-11"}, "v3,label=3.0"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("history-site-repo") / "repo")


@pytest.fixture(scope="module")
def built(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("history-site")
    return build_ok(mkdocs_config(tmp, repo, history=HISTORY))


def test_build_site_adds_the_section_and_its_nav_entry(repo: Path) -> None:
    counter = TokenCounter(persist=False)
    releases = series.load_series(parse_option(HISTORY), spec_dir=repo, counter=counter)
    hist = history.build_history(releases)
    result = pipeline.run(repo, counter=counter)
    site = build_site(result, history=hist)
    assert ("History", "prompts/history/index.md") in site.nav
    assert {"prompts/history/index.md", "prompts/history/step-1.md", "prompts/history/step-2.md"} <= set(site.pages)
    plain = build_site(result)
    assert not any(p.startswith("prompts/history/") for p in plain.pages)
    # The chart follows one variant per model of the last release, back through every release.
    lines = traces(hist)
    assert [vid.split("/")[0] for vid, _ in lines] == ["harbor-5", "harbor-5-mini"]
    for vid, totals in lines:
        assert totals == [r.variants[vid].total for r in releases]
    chosen = "harbor-5-mini/default/pair_programming/read-only"
    page = build_site(result, history=hist, history_chart=(chosen, "no/such/variant")).pages["prompts/history/index.md"]
    assert page.count("<polyline") == 1 and f"<code>{chosen}</code>" in page
    # Its realtime section grew in v2 (pair programming), and the chart's table says so.
    assert traces(hist, [chosen])[0][1][1] > traces(hist, [chosen])[0][1][0]


def test_timeline_page(built: Path) -> None:
    page = (built / "prompts" / "history" / "index.html").read_text(encoding="utf-8")
    svg = re.search(r"<svg class=\"ps-history-chart\".*?</svg>", page, re.S)
    assert svg, "no chart"
    assert svg.group().count("<polyline") == 2 and "<polygon" in svg.group()
    for label in ("v1", "2.0", "3.0", "2026-03-11"):
        assert f">{label}<" in svg.group()
    assert "http" not in svg.group().replace("http://www.w3.org/2000/svg", "")  # nothing fetched
    assert 'href="step-1/"' in page and 'href="step-2/"' in page


def test_step_pages_show_changes_diffs_and_link_published_variants(built: Path, repo: Path) -> None:
    one = (built / "prompts" / "history" / "step-1" / "index.html").read_text(encoding="utf-8")
    assert "fragment realtime changed" in one and "mode = review (all models)" in one
    assert 'class="ps-udiff"' in one and REALTIME_LINE in one
    two = (built / "prompts" / "history" / "step-2" / "index.html").read_text(encoding="utf-8")
    assert "fragment open_files moved (user message → developer message)" in two
    assert "harbor-4-legacy gone in 3.0" in two
    # The site is the working tree, which is v3: step 2's head variants are published, step 1's are not.
    assert re.search(r'href="\.\./\.\./variants/harbor-5--default--default--workspace-write/"', two)
    assert "../../variants/" not in one
    assert (built / "prompts" / "variants" / "harbor-5--default--default--workspace-write" / "index.html").is_file()


def test_a_bad_history_option_stops_the_build(repo: Path, tmp_path: Path) -> None:
    from _helpers import mkdocs_build

    proc = mkdocs_build(mkdocs_config(tmp_path, repo, history=["v1", "no-such-tag"]))
    assert proc.returncode != 0
    assert "promptspec: error: option 'history': side 2 (no-such-tag): unknown git revision 'no-such-tag'" in proc.stderr


def test_build_out_writes_the_same_section(repo: Path, tmp_path: Path) -> None:
    """`promptspec build --out --history ...`: the History pages the plugin
    option gives, for a site built without MkDocs; a bad side stops it with
    one line and writes nothing."""
    from _helpers import cli

    out = tmp_path / "out"
    chosen = "harbor-5-mini/default/pair_programming/read-only"
    proc = cli("build", "--spec", str(repo), "--out", str(out), "--history", "v1", "--history", "v2,label=2.0,date=2026-03-11",
               "--history", "v3,label=3.0", "--history-chart", chosen)
    assert proc.returncode == 0, proc.stderr
    counter = TokenCounter(persist=False)
    hist = history.build_history(series.load_series(parse_option(HISTORY), spec_dir=repo, counter=counter))
    pages = build_site(pipeline.run(repo, counter=counter), history=hist, history_chart=(chosen,)).pages
    for path in ("prompts/history/index.md", "prompts/history/step-1.md", "prompts/history/step-2.md"):
        assert (out / path).read_text(encoding="utf-8") == pages[path], path
    assert f"<code>{chosen}</code>" in pages["prompts/history/index.md"]

    bad = cli("build", "--spec", str(repo), "--out", str(tmp_path / "bad"), "--history", "v1", "--history", "no-such-tag")
    assert bad.returncode != 0 and not (tmp_path / "bad").exists()
    (line,) = bad.stderr.strip().splitlines()
    assert line.startswith("promptspec: error: side 2 (no-such-tag): unknown git revision 'no-such-tag'"), line


# ---------------------------------------------------------------------------
# In a real browser

CONTRAST = """
const parse = c => { const m = c.match(/[\\d.]+/g).map(Number); return m.length > 3 && m[3] === 0 ? null : m.slice(0, 3); };
const lum = rgb => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]); };
const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
let el = document.querySelector('svg.ps-history-chart'), bg = null;
for (let e = el; e && !bg; e = e.parentElement) bg = parse(getComputedStyle(e).backgroundColor);
bg = bg || [255, 255, 255];
const text = parse(getComputedStyle(el.querySelector('text')).fill);
const lines = [...el.querySelectorAll('polyline')].map(p => ratio(parse(getComputedStyle(p).stroke), bg));
return {bg: bg, text: ratio(text, bg), lines: lines};
"""




@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    chromium, chromedriver = browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", f"--user-data-dir={tmp_path_factory.mktemp('chromium-history')}",
                 "--window-size=1400,1000", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(chromedriver), options=options)
    yield drv
    drv.quit()


@pytest.fixture(scope="module")
def served(built: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(built)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_timeline_renders_offline_in_both_schemes(driver, served) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")
    driver.get(f"{served}/prompts/history/")
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
    box = driver.execute_script("const r = document.querySelector('svg.ps-history-chart').getBoundingClientRect(); return [r.width, r.height];")
    assert box[0] > 300 and box[1] > 100
    assert driver.execute_script("return document.querySelectorAll('svg.ps-history-chart circle').length") == 6
    resources = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(url.startswith(served) for url in resources), resources
    scheme_now = "return document.body.getAttribute('data-md-color-scheme')"
    for scheme in ("default", "slate"):
        # Through the palette toggle in the header (mkdocs.yml's light/dark pair), as a reader switches.
        if driver.execute_script(scheme_now) != scheme:
            driver.find_element(By.CSS_SELECTOR, "form[data-md-component=palette] label:not([hidden])").click()
            WebDriverWait(driver, 10).until(lambda d: d.execute_script(scheme_now) == scheme)
        seen = driver.execute_script(CONTRAST)
        assert seen["text"] >= 4.5, (scheme, seen)
        assert min(seen["lines"]) >= 3, (scheme, seen)  # WCAG contrast for graphics
        if scheme == "slate":
            assert sum(seen["bg"]) < 200, seen  # the dark scheme did apply
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_step_page_renders_offline_with_its_diff(driver, served) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")
    driver.get(f"{served}/prompts/history/step-1/")
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
    added = [e.get_attribute("textContent") for e in driver.find_elements(By.CSS_SELECTOR, "pre.ps-udiff .ps-diff-add")]
    assert "+" + REALTIME_LINE in added
    resources = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(url.startswith(served) for url in resources), resources
    assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []


def test_default_chart_follows_the_variants_that_last_not_the_last_release_s_new_models() -> None:
    """Three releases where the last adds two models: the default chart follows
    the variants present in all three, one per model, not the new models' dots."""
    from types import SimpleNamespace as NS

    def release(models: list[str], total: int):
        return NS(variants={f"{m}/default": NS(model=m, total=total + i) for i, m in enumerate(models)})

    releases = [release(["old-a", "old-b"], 100), release(["old-a", "old-b"], 110), release(["new-x", "old-a", "new-y", "old-b"], 120)]
    steps = [NS(diff=NS(matched=[(v, v) for v in r.variants if v in prev.variants])) for prev, r in zip(releases, releases[1:])]
    lines = traces(NS(releases=releases, steps=steps))
    assert [vid for vid, _ in lines] == ["old-a/default", "old-b/default"]
    assert lines[0][1] == [100, 110, 121]
