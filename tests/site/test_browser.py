"""The built site in a real browser: headless Chromium driven by Selenium.

The repository's own site (mkdocs.yml: the embedded spec, the guide, every
page kind) is built once with its defaults, so diagrams are promptspec's
HTML; a hostile copy of the spec is built with the plugin's `mermaid_js`
option pointing at a local Mermaid from the npm registry (the opt-in path).
Both are served by `python -m http.server`'s handler on 127.0.0.1, and the
browser is started with every other host unresolvable, so the pages must
work offline: no CDN, no web fonts.

Material renders each Mermaid diagram into a *closed* shadow root; the test
makes `attachShadow` open (before any page script runs) so it can look at
the SVG.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

from promptspec import pipeline
from promptspec.measure.counter import TokenCounter

from _helpers import MKDOCS_YML, TEMPLATES, build_ok, expected_sections, mkdocs_build, mkdocs_config
from required import browser, missing, require_program

VARIANT = "harbor-5/friendly/plan/workspace-write"
HOSTILE_MARKER = '"]); click n1 alert(1) <b>&#35;</b>'  # short enough for a diagram label (40 chars)

CHROMIUM, CHROMEDRIVER = browser()  # found on PATH; a skip, or in CI a failure, without them
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

OPEN_SHADOW_ROOTS = """
(() => {
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    return attach.call(this, Object.assign({}, init, { mode: "open" }));
  };
})();
"""


# ---------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="session")
def browser_available():
    return CHROMIUM, CHROMEDRIVER


@pytest.fixture(scope="session")
def mermaid_js(browser_available, tmp_path_factory) -> Path:
    """mermaid.min.js from the npm registry: $PROMPTSPEC_MERMAID_JS (set by
    .ci/run), else a fresh `npm install mermaid@11` into tmp."""
    given = os.environ.get("PROMPTSPEC_MERMAID_JS")
    if given:
        path = Path(given)
        if not path.is_file():
            pytest.fail(f"PROMPTSPEC_MERMAID_JS={given} does not exist")
        return path
    npm = require_program("npm", "no local Mermaid copy without it: set PROMPTSPEC_MERMAID_JS or install npm")
    prefix = tmp_path_factory.mktemp("npm")
    try:
        proc = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", "mermaid@11"],
            capture_output=True, text=True, timeout=600,
        )
    except subprocess.TimeoutExpired:
        missing("npm install mermaid@11 timed out (offline?)")
    path = prefix / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
    if proc.returncode != 0 or not path.is_file():
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        missing(f"npm install mermaid@11 failed (offline?): {last}")
    return path


def _hostile_spec(root: Path) -> Path:
    spec = root / "hostile-spec"
    shutil.copytree(TEMPLATES, spec)
    (spec / "fragments" / "hostile.yaml").write_text(
        yaml.safe_dump({
            "description": "<script>alert(1)</script>",
            "role": "developer",
            "slot": "developer_extensions",
            "start": HOSTILE_MARKER + "\n",
            "end": "\n</INSTRUCTIONS>",
            "text": "{% raw %}<img src=x onerror=alert(2)> *emph* {{ x }}{% endraw %}\n\tend\n",
        }, sort_keys=False),
        encoding="utf-8",
    )
    models = json.loads((spec / "models.json").read_text())
    models["models"][0]["display_name"] = '"]) ; click n0 call alert(3) <b>x</b>'
    (spec / "models.json").write_text(json.dumps(models, indent=2), encoding="utf-8")
    return spec


def _build(root: Path, name: str, spec: Path, www: Path, mermaid_js: Path | None = None, **options) -> None:
    """Build `spec` strict into www/name, the folder the test server serves."""
    build_ok(mkdocs_config(root / f"{name}-work", spec, mermaid_js=str(mermaid_js) if mermaid_js else None, site_dir=www / name, **options))


CONFORMANCE_DIFF = "-codex <b>one</b>\n+promptspec <script>alert(4)</script>"


def _conformance_report(root: Path) -> Path:
    """A stored verify report for the embedded spec's first two variants (our data, verify's shape)."""
    vs = pipeline.run(TEMPLATES, counter=TokenCounter(root / "report-cache")).variants[:2]
    rows = [{"id": vs[0].id, "config": {}, "identical": False, "refused": None,
             "part": "input[0] developer part 1 (permissions)", "diff": CONFORMANCE_DIFF},
            {"id": vs[1].id, "config": {}, "identical": True, "refused": None, "part": None, "diff": None}]
    path = root / "conformance.json"
    path.write_text(json.dumps({"kind": "promptspec-verify-report", "version": 1, "codex_release": "0.125.0",
                                "spec": "templates", "date": "2026-12-01", "matrix_size": 2, "compared": 2,
                                "identical": 1, "not_modelled": ["tools"], "variants": rows}), encoding="utf-8")
    return path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def www(browser_available, tmp_path_factory):
    """The folder the test server serves, and its URL."""
    root = tmp_path_factory.mktemp("browser-www")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def embedded(www, tmp_path_factory):
    """The repository's site exactly as `python3 dev.py build` makes it
    (defaults: no Mermaid, no CDN), built once for every test here."""
    root, base = www
    proc = mkdocs_build(MKDOCS_YML, "-d", str(root / "embedded"))
    assert proc.returncode == 0, proc.stderr
    result = pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path_factory.mktemp("cache")))
    return base, result


@pytest.fixture(scope="session")
def sites(www, embedded, mermaid_js, tmp_path_factory):
    """The embedded site and the hostile one (Mermaid opted in), their results."""
    root, base = www
    work = tmp_path_factory.mktemp("browser-hostile")
    hostile = _hostile_spec(work)
    _build(work, "hostile", hostile, root, mermaid_js)
    results = {"embedded": embedded[1], "hostile": pipeline.run(hostile, counter=TokenCounter(work / "cache"))}
    return base, results


@pytest.fixture(scope="session")
def conformance_site(www, embedded, tmp_path_factory):
    """The embedded spec with a stored verify report (plugin option 'conformance')."""
    root, base = www
    work = tmp_path_factory.mktemp("browser-conformance")
    _build(work, "conformance", TEMPLATES, root, conformance=str(_conformance_report(work)))
    return base, embedded[1]


@pytest.fixture(scope="session")
def driver(browser_available, tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
        "--window-size=1400,1000",
        # Offline: any host but the local server fails to resolve.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    drv.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": OPEN_SHADOW_ROOTS})
    yield drv
    drv.quit()


def _open(driver, url: str):
    driver.get_log("browser")  # drop entries from earlier pages
    driver.get(url)
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")


def _errors(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _variant_url(base: str, name: str, result, vid: str) -> tuple[str, object]:
    v = next(v for v in result.variants if v.id == vid)
    return f"{base}/{name}/prompts/variants/{v.slug}/", v


def _wait_for_diagram(driver) -> str:
    """The rendered SVG's text (Material replaces pre.mermaid by div.mermaid)."""
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script(
            "const el = document.querySelector('div.mermaid');"
            "return !!(el && el.shadowRoot && el.shadowRoot.querySelector('svg'));"
        )
    )
    return driver.execute_script("return document.querySelector('div.mermaid').shadowRoot.querySelector('svg').textContent")


# ---------------------------------------------------------------------------
# tests


def _set_width(driver, width: int) -> None:
    """Lay pages out `width` CSS px wide (a phone at 390: mobile metrics, as
    a window cannot be made that narrow)."""
    if width >= 1000:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        driver.set_window_size(width, 1000)
    else:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": 844, "deviceScaleFactor": 1, "mobile": True})


def _scheme(driver) -> str:
    return driver.execute_script("return document.body.getAttribute('data-md-color-scheme')")


def _set_scheme(driver, scheme: str) -> None:
    """Switch the open page to `scheme` with the palette toggle in the
    header, as a reader would (Material keeps the choice for later pages)."""
    if _scheme(driver) != scheme:
        driver.find_element(By.CSS_SELECTOR, "form[data-md-component=palette] label:not([hidden])").click()
        WebDriverWait(driver, 10).until(lambda d: _scheme(d) == scheme)


# Page kinds of the repository's site: (label, path below the site root).
PAGE_KINDS = [
    ("home", ""),
    ("matrix", "prompts/"),
    ("variant", "prompts/variants/harbor-5--friendly--plan--workspace-write/"),
    ("models", "prompts/models/"),
    ("model", "prompts/models/harbor-5/"),
    ("personality", "prompts/personalities/friendly/"),
    ("mode", "prompts/modes/pair_programming/"),
    ("extra axis value", "prompts/axes/sandbox_mode/workspace-write/"),
    ("fragments", "prompts/fragments/"),
    ("tools", "prompts/tools/"),
    ("fragment", "prompts/fragments/collaboration_mode/"),
    ("assembly", "prompts/assembly/"),
    ("lint", "prompts/lint/"),
    ("changes", "prompts/changes/"),
    ("conversations", "prompts/conversations/"),
    ("conversation", "prompts/conversations/long-session/"),
    ("explorer", "prompts/explorer/#variant=harbor-5/friendly/plan/workspace-write"),
    ("guide", "guide/"),
    ("fragment anatomy", "guide/fragment-anatomy/"),
    ("add a fragment", "guide/add-a-fragment/"),
    ("architecture", "architecture/"),
    ("404", "404.html"),
]
DIAGRAM_PAGES = {"variant", "assembly", "architecture"}
WIDE_ON_A_PHONE = {"matrix"}
"""Page kinds with a table wider than a 390 px phone, so the pinned-column check has something to measure."""

LAYOUT = """
const main = document.querySelector('.md-content');
const page = document.documentElement;
const out = {main: [main.scrollWidth, main.clientWidth], page: [page.scrollWidth, page.clientWidth], tables: [], raw: [], figures: []};
out.resources = performance.getEntriesByType('resource').map(e => e.name);
out.unpinned = [];
function scroller(t) {  // the element that scrolls the table sideways
  for (let e = t; e && e !== main; e = e.parentElement) {
    const x = getComputedStyle(e).overflowX;
    if ((x === 'auto' || x === 'scroll') && e.scrollWidth > e.clientWidth + 1) return e;
  }
  return null;
}
function alpha(c) { const m = c.match(/[0-9.]+/g) || [0, 0, 0, 0]; return m.length > 3 ? Number(m[3]) : 1; }
document.querySelectorAll('.md-content table').forEach(t => {
  const frame = scroller(t);
  if (!frame) return;
  const name = (t.rows[0] || {}).textContent.trim().slice(0, 60);
  out.tables.push(name);
  // A table that scrolls keeps its key (first) column in view: scroll it to
  // the end and measure where the first column is (and that the rest moved).
  const row = [...t.tBodies[0].rows].find(r => r.cells.length > 1);
  if (!row) { out.unpinned.push(name + ': no body row with two cells'); return; }
  const first = row.cells[0], last = row.cells[row.cells.length - 1];
  first.scrollIntoView({block: 'center'});
  frame.scrollLeft = 0;
  const box = frame.getBoundingClientRect(), before = first.getBoundingClientRect().left, lastBefore = last.getBoundingClientRect().left;
  frame.scrollLeft = frame.scrollWidth;
  const after = first.getBoundingClientRect(), lastAfter = last.getBoundingClientRect().left;
  const problems = [];
  if (!(lastAfter < lastBefore - 1)) problems.push('the table did not scroll');
  // Pinned: it stops at the frame's left edge (it may start a padding further right) and stays in view.
  if (after.left < box.left - 1 || after.left > before + 1) problems.push(`first column moved from ${before} to ${after.left} (frame at ${box.left})`);
  if (alpha(getComputedStyle(first).backgroundColor) < 1) problems.push('the first column is see-through');
  if (problems.length) out.unpinned.push(name + ': ' + problems.join('; '));
  frame.scrollLeft = 0;
});
document.querySelectorAll('pre.mermaid, div.mermaid, code.language-mermaid').forEach(e => out.raw.push(e.textContent.slice(0, 80)));
if (/flowchart (LR|TB)|#91;|#60;|classDef /.test(main.innerText)) out.raw.push('diagram source in the text');
document.querySelectorAll('figure.ps-flow').forEach(f => {
  const r = f.getBoundingClientRect();
  out.figures.push([r.width, r.height, f.querySelectorAll('.ps-flow-node').length]);
});
return out;
"""


@pytest.mark.parametrize("kind, path", PAGE_KINDS, ids=[k for k, _ in PAGE_KINDS])
def test_every_page_kind_works_offline_and_fits(driver, embedded, kind, path):
    """No console error, no diagram source shown (diagrams are drawn), and
    nothing wider than the main column at 1400 px or on a 390 px phone; at
    1400 px every table fits without scrolling."""
    base, _ = embedded
    try:
        for width in (1400, 390):
            _set_width(driver, width)
            _open(driver, f"{base}/embedded/{path}")
            if kind == "explorer":
                WebDriverWait(driver, 30).until(lambda d: d.execute_script(
                    "return document.querySelector('.promptspec-explorer').getAttribute('data-ready')"))
            info = driver.execute_script(LAYOUT)
            assert _errors(driver) == [], (width, kind)
            # Offline: every resource the page loaded came from the local server (no CDN, no web font).
            assert [u for u in info["resources"] if not u.startswith(base)] == [], (width, kind)
            assert info["raw"] == [], (width, info["raw"])
            scroll, client = info["main"]
            assert scroll <= client + 1, f"{kind} at {width} px: main column {scroll} px wide in {client} px"
            scroll, client = info["page"]
            assert scroll <= client + 1, f"{kind} at {width} px: the page scrolls sideways ({scroll} px in {client} px)"
            if width == 1400:
                assert info["tables"] == [], f"{kind}: tables wider than the column: {info['tables']}"
            elif kind in WIDE_ON_A_PHONE:
                assert info["tables"], f"{kind}: no table scrolls at {width} px, so the pinned column went unchecked"
            assert info["unpinned"] == [], f"{kind} at {width} px: scrolling tables whose key column is not pinned: {info['unpinned']}"
            if kind in DIAGRAM_PAGES:
                assert info["figures"], f"{kind}: no diagram drawn"
                for w, h, nodes in info["figures"]:
                    assert w > 0 and h > 0 and nodes >= 2
    finally:
        _set_width(driver, 1400)


CONTRAST = """
function rgba(s) { const m = s.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; }
function lum(c) {
  const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
}
function over(top, below) {
  const a = top[3];
  return [0, 1, 2].map(i => top[i] * a + below[i] * (1 - a)).concat([1]);
}
function background(el) {
  const layers = [];
  for (let e = el; e; e = e.parentElement) {
    const c = rgba(getComputedStyle(e).backgroundColor);
    if (c[3] > 0) layers.push(c);
    if (c[3] >= 1) break;
  }
  let bg = [255, 255, 255, 1];
  if (layers.length && layers[layers.length - 1][3] >= 1) bg = layers.pop();
  while (layers.length) bg = over(layers.pop(), bg);
  return bg;
}
const out = [];
document.querySelectorAll('figure.ps-flow').forEach(f => f.querySelectorAll('span, code, a, div.ps-flow-head').forEach(el => {
  if (!el.textContent.trim() || el.children.length && el.tagName !== 'CODE' && el.tagName !== 'A') return;
  const fg = over(rgba(getComputedStyle(el).color), background(el));
  const bg = background(el);
  const [a, b] = [lum(fg), lum(bg)];
  out.push([(Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), el.textContent.slice(0, 30)]);
}));
return out;
"""


@pytest.mark.parametrize("scheme", ["default", "slate"])
@pytest.mark.parametrize("path", ["prompts/variants/harbor-5--friendly--plan--workspace-write/", "prompts/assembly/", "architecture/"])
def test_diagram_text_contrast_in_both_schemes(driver, embedded, scheme, path):
    base, _ = embedded
    _open(driver, f"{base}/embedded/{path}")
    try:
        _set_scheme(driver, scheme)
        ratios = driver.execute_script(CONTRAST)
        assert len(ratios) >= 6
        worst = min(ratios)
        assert worst[0] >= 4.5, f"{scheme}: diagram text {worst[1]!r} has contrast {worst[0]:.2f}:1"
    finally:
        _set_scheme(driver, "default")


HEAT_CONTRAST = CONTRAST.replace(
    "document.querySelectorAll('figure.ps-flow').forEach(f => f.querySelectorAll('span, code, a, div.ps-flow-head')",
    "[document].forEach(f => f.querySelectorAll('td.ps-cell .ps-num a, td.ps-cell .ps-num, .ps-heat-legend .ps-key')",
)


def test_palette_toggle_switches_to_dark_and_the_heat_map_stays_readable(driver, embedded):
    base, _ = embedded
    _open(driver, f"{base}/embedded/prompts/")
    try:
        for scheme in ("slate", "default"):
            _set_scheme(driver, scheme)
            ratios = driver.execute_script(HEAT_CONTRAST)
            assert ratios and min(ratios)[0] >= 4.5, (scheme, min(ratios))
            _open(driver, f"{base}/embedded/prompts/fragments/")  # the choice holds on the next page
            assert _scheme(driver) == scheme
            _open(driver, f"{base}/embedded/prompts/")
    finally:
        _set_scheme(driver, "default")
    assert _errors(driver) == []


def test_matrix_page_loads_without_console_errors(driver, embedded):
    base, result = embedded
    _open(driver, f"{base}/embedded/prompts/")
    cells = driver.find_elements(By.CSS_SELECTOR, "td.ps-cell a")
    assert len(cells) == len(result.variants)
    assert _errors(driver) == []


def test_variant_page_shows_exact_text_and_markers(driver, embedded):
    base, result = embedded
    url, v = _variant_url(base, "embedded", result, VARIANT)
    _open(driver, url)
    summaries = [s.get_attribute("textContent") for s in driver.find_elements(By.CSS_SELECTOR, "details.ps-section > summary")]
    assert any("<environment_context>" in s for s in summaries)
    shown = driver.execute_script(
        "const out = {};"
        "document.querySelectorAll('pre.ps-prompt[data-ps-section]').forEach(p => out[p.dataset.psSection] = p.textContent);"
        "return out;"
    )
    assert shown == expected_sections(result, v)
    assert _errors(driver) == []


def _placement(totals: list[int], t: int) -> str:
    """Where a variant of `t` tokens sits among `totals` (smallest first): the
    sentence the variant pages held before promptspec.js wrote it, in the
    site's number formats (markup.num, markup.signed)."""
    import bisect

    from promptspec.site.html.markup import signed

    n, lo, hi = len(totals), totals[0], totals[-1]
    if n == 1:
        return "the only variant of the matrix"
    rank = n - bisect.bisect_right(totals, t) + 1
    suffix = "th" if 10 <= rank % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(rank % 10, "th")
    where = f"largest of {n:,}" if t == hi else f"smallest of {n:,}" if t == lo else f"{rank:,}{suffix} largest of {n:,}"
    over = f"{signed(t - lo)} tokens over the smallest" if t != lo else f"{signed(hi - t)} tokens under the largest"
    if t != lo and t != hi:
        over += f", {signed(t - hi)} under the largest"
    return f"{where}; {over}"


def test_variant_page_says_where_it_ranks(driver, embedded):
    """The place line is filled in by promptspec.js from the totals file;
    for the largest, the smallest and ranks with each ordinal suffix it
    says what the pages said before (_placement)."""
    base, result = embedded
    totals = sorted(m.total for m in result.measures)
    ranked = sorted(result.variants, key=lambda v: -result.measure_of(v).total)
    picked = {ranked[i].id for i in (0, 1, 2, 10, 20, 21, 22, len(ranked) - 2, len(ranked) - 1) if i < len(ranked)}
    for vid in sorted(picked):
        url, v = _variant_url(base, "embedded", result, vid)
        _open(driver, url)
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return !document.querySelector('.ps-place[data-src]')"))
        shown = driver.find_element(By.CSS_SELECTOR, "p.ps-place").get_attribute("textContent")
        assert shown == f"In the matrix: {_placement(totals, result.measure_of(v).total)}.", vid
    assert _errors(driver) == []


def test_variant_diagram_is_drawn_and_links_to_its_sections(driver, embedded):
    """The send order, drawn without a script: every section in order, each
    box opening its section's text."""
    base, result = embedded
    url, v = _variant_url(base, "embedded", result, VARIANT)
    _open(driver, url)
    req = next(r for r in result.requests if r.variant == v)
    titles = driver.execute_script(
        "return [...document.querySelectorAll('figure.ps-flow .ps-flow-node .ps-flow-title')].map(t => t.textContent)")
    expected = ["instructions"] + ([f"tools ({len(req.tools)})"] if req.tools else [])
    expected += [f"[{j:02}] {s.fragment}" for m in req.messages for j, s in enumerate(m.sections, 1)]
    assert titles == expected
    heads = driver.execute_script("return [...document.querySelectorAll('figure.ps-flow .ps-flow-head')].map(t => t.textContent)")
    assert [h.split(" ", 1)[0] for h in heads] == [f"{i:02}" for i in range(len(req.messages))]
    assert "<environment_context>" in driver.find_element(By.CSS_SELECTOR, "figure.ps-flow").text
    driver.find_element(By.CSS_SELECTOR, 'figure.ps-flow a[href="#s-1-1"]').click()
    WebDriverWait(driver, 10).until(lambda d: d.execute_script("return location.hash") == "#s-1-1")
    assert _errors(driver) == []


def test_collapsed_section_expands_on_click(driver, embedded):
    base, result = embedded
    url, _ = _variant_url(base, "embedded", result, VARIANT)
    _open(driver, url)
    details = driver.find_element(By.CSS_SELECTOR, "details#s-0-1")
    text = details.find_element(By.CSS_SELECTOR, "pre.ps-prompt")
    assert details.get_attribute("open") is None
    assert not text.is_displayed()
    details.find_element(By.TAG_NAME, "summary").click()
    WebDriverWait(driver, 10).until(lambda d: text.is_displayed())
    assert details.get_attribute("open") is not None
    assert "<permissions instructions>" in text.text


def test_expand_all_button_opens_every_section(driver, embedded):
    base, result = embedded
    url, _ = _variant_url(base, "embedded", result, VARIANT)
    _open(driver, url)
    button = WebDriverWait(driver, 10).until(EC.visibility_of_element_located((By.CSS_SELECTOR, ".ps-expand")))
    button.click()
    states = driver.execute_script("return [...document.querySelectorAll('details.ps-section')].map(d => d.open)")
    assert states and all(states)


def test_search_finds_a_fragment_by_name(driver, embedded):
    base, _ = embedded
    _open(driver, f"{base}/embedded/prompts/")
    box = WebDriverWait(driver, 10).until(EC.element_to_be_clickable((By.CSS_SELECTOR, "input.md-search__input")))
    box.click()
    box.send_keys("review_checklist")

    def hits(d):
        # Read the hrefs in one script call: the result list is re-rendered as
        # the index answers, so element handles can go stale between calls.
        links = d.execute_script(
            "return Array.from(document.querySelectorAll('.md-search-result__item a'), a => a.href);"
        )
        return [h for h in links or [] if h and "/prompts/fragments/review_checklist/" in h]

    assert WebDriverWait(driver, 30).until(hits)
    assert _errors(driver) == []


def test_hostile_spec_stays_text_in_the_browser(driver, sites):
    """The hostile spec with Mermaid opted in (mermaid_js): the diagram is
    drawn from the local copy, offline, and every spec string stays text."""
    base, results = sites
    result = results["hostile"]
    v = next(v for v in result.variants if v.model == "harbor-5")
    _open(driver, f"{base}/hostile/prompts/variants/{v.slug}/")
    svg_text = _wait_for_diagram(driver)
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text
    assert HOSTILE_MARKER in svg_text  # the whole label, as text
    shown = driver.execute_script(
        "const out = {};"
        "document.querySelectorAll('pre.ps-prompt[data-ps-section]').forEach(p => out[p.dataset.psSection] = p.textContent);"
        "return out;"
    )
    assert shown == expected_sections(result, v)
    assert driver.execute_script("return document.querySelectorAll('img[src=\"x\"], .md-content script').length") == 0
    _open(driver, f"{base}/hostile/prompts/models/harbor-5/")
    assert '"]) ; click n0 call alert(3) <b>x</b>' in driver.find_element(By.CSS_SELECTOR, ".md-content").text
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text
    assert _errors(driver) == []


def _explorer_ready(driver, url: str):
    _open(driver, url)
    root = driver.find_element(By.CSS_SELECTOR, ".promptspec-explorer")
    WebDriverWait(driver, 30).until(lambda d: root.get_attribute("data-ready") or root.get_attribute("data-error"))
    assert root.get_attribute("data-ready") == "true", driver.find_element(By.CSS_SELECTOR, ".pse-status").text
    return root


def test_explorer_page_shows_a_picked_variant(driver, embedded):
    """The explorer page of the built MkDocs site: data loads from the site
    itself (offline), picking values shows that variant's exact text, and a
    variant page's "open in explorer" link opens the same variant."""
    from selenium.webdriver.support.ui import Select

    base, result = embedded
    root = _explorer_ready(driver, f"{base}/embedded/prompts/explorer/")
    pick = dict(zip((a for a, _ in result.spec.axes), VARIANT.split("/")))
    for axis, value in pick.items():
        Select(driver.find_element(By.CSS_SELECTOR, f'select[data-axis="{axis}"]')).select_by_value(value)
    WebDriverWait(driver, 10).until(lambda d: root.get_attribute("data-variant") == VARIANT)
    v = next(v for v in result.variants if v.id == VARIANT)
    request = next(r for r in result.requests if r.variant == v)
    env = next(s for _, _, s in request.sections if s.fragment == "environment_context")
    shown = driver.execute_script("return document.querySelector('details[data-fragment=\"environment_context\"] pre').textContent")
    assert "<environment_context>" in shown
    assert shown == env.text
    assert f"{result.measure_of(v).total:,} tokens" in driver.find_element(By.CSS_SELECTOR, ".pse-summary").text
    # The same numbering as the variant pages: messages 00, 01; sections [01]...
    heads = driver.execute_script("return [...document.querySelectorAll('.pse-message:not(.pse-role-tools) > .pse-message-head')].map(h => h.textContent)")
    assert [h.split(" ")[0] for h in heads] == [f"{i:02}" for i in range(len(request.messages))]
    assert _errors(driver) == []

    # From a variant's page to the explorer, at that variant.
    other = "harbor-5-mini/pragmatic/execute/read-only"
    url, _ = _variant_url(base, "embedded", result, other)
    _open(driver, url)
    driver.find_element(By.CSS_SELECTOR, "a.ps-explore").click()
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "const r = document.querySelector('.promptspec-explorer'); return r && r.getAttribute('data-variant')") == other)
    assert driver.current_url.startswith(f"{base}/embedded/prompts/explorer/")
    assert _errors(driver) == []


def test_explorer_links_a_picked_variant_to_its_page_and_json(driver, embedded):
    base, result = embedded
    v = next(v for v in result.variants if v.id == VARIANT)
    _explorer_ready(driver, f"{base}/embedded/prompts/explorer/#variant={VARIANT}")
    json_href = driver.find_element(By.CSS_SELECTOR, ".pse-links a.pse-json-link").get_attribute("href")
    assert json_href == f"{base}/embedded/prompts/variants/{v.slug}.json"
    payload = driver.execute_script("return fetch(arguments[0]).then(r => r.json())", json_href)
    texts = [part["text"] for msg in payload["input"] for part in msg["content"]]
    assert texts == [s.text for _, _, s in next(r for r in result.requests if r.variant == v).sections]
    driver.find_element(By.CSS_SELECTOR, ".pse-links a.pse-page-link").click()
    WebDriverWait(driver, 30).until(lambda d: d.current_url == f"{base}/embedded/prompts/variants/{v.slug}/")
    assert VARIANT in driver.find_element(By.CSS_SELECTOR, ".ps-crumbs").text
    assert _errors(driver) == []


def test_explorer_shows_each_conversation_from_the_picked_variant(driver, embedded):
    """Any variant, not only each model's first: the picked variant's threads,
    request by request, with the items each adds exactly as the library builds them."""
    from promptspec.assemble.conversation import conversation
    from promptspec.spec.readers.scripts import read_script

    base, result = embedded
    firsts = {}
    for v in result.variants:
        firsts.setdefault(v.model, v)
    v = next(v for v in reversed(result.variants) if v not in firsts.values())  # no conversation page starts here
    _explorer_ready(driver, f"{base}/embedded/prompts/explorer/#variant={v.id}")
    name, ref = result.spec.conversations[-1]
    thread = conversation(result.spec, v, read_script(result.spec.root / ref, ref))
    block = driver.find_element(By.CSS_SELECTOR, f'details.pse-conversation[data-conversation="{name}"]')
    requests = block.find_elements(By.CSS_SELECTOR, "details.pse-request")
    assert len(requests) == len(thread) and f"{len(thread)} requests" in block.find_element(By.TAG_NAME, "summary").get_attribute("textContent")
    assert [r.get_attribute("data-kind") for r in requests] == [t.kind for t in thread]
    n = [t.kind for t in thread].index("compaction")
    shown = [p.get_attribute("textContent") for p in requests[n].find_elements(By.CSS_SELECTOR, "pre")]
    assert shown == [s.text for m in thread[n].new_messages for s in m.sections] and shown
    assert _errors(driver) == []


def test_explorer_compares_two_variants_section_by_section(driver, embedded):
    from selenium.webdriver.support.ui import Select

    base, result = embedded
    other = "harbor-5/friendly/default/workspace-write"
    root = _explorer_ready(driver, f"{base}/embedded/prompts/explorer/#variant={VARIANT}")
    driver.find_element(By.CSS_SELECTOR, ".pse-compare > summary").click()
    for axis, value in zip((a for a, _ in result.spec.axes), other.split("/")):
        Select(driver.find_element(By.CSS_SELECTOR, f'select[data-axis-b="{axis}"]')).select_by_value(value)
    WebDriverWait(driver, 10).until(lambda d: root.get_attribute("data-compare") == other)
    rows = driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('.pse-compare-table tbody tr')].map(r => [r.dataset.part, r.dataset.state]))")
    a, b = (next(r for r in result.requests if r.variant.id == i) for i in (VARIANT, other))
    sa = {s.fragment: s.text for _, _, s in a.sections}
    sb = {s.fragment: s.text for _, _, s in b.sections}
    expected = {"instructions": "same" if a.base.text == b.base.text else "differs"}
    for name in [*sa, *(n for n in sb if n not in sa)]:
        expected[name] = "only in B" if name not in sa else "only in A" if name not in sb else "same" if sa[name] == sb[name] else "differs"
    assert rows == expected
    assert "differs" in rows.values() and "only in A" in rows.values()  # plan has the review checklist, default not
    assert _errors(driver) == []


def test_explorer_finds_prompt_text_and_the_variants_that_send_it(driver, embedded):
    """A phrase from one fragment: the search names that fragment and lists
    exactly the variants whose request contains it, each linked."""
    base, result = embedded
    phrase = "which callers depend"
    sending = {r.variant.id for r in result.requests for _, _, s in r.sections if phrase in s.text.lower()}
    assert 0 < len(sending) < len(result.variants)
    fragments = {s.fragment for r in result.requests for _, _, s in r.sections if phrase in s.text.lower()}
    assert fragments == {"review_checklist"}
    root = _explorer_ready(driver, f"{base}/embedded/prompts/explorer/")
    driver.find_element(By.CSS_SELECTOR, ".pse-find > summary").click()
    box = driver.find_element(By.CSS_SELECTOR, ".pse-find-input")
    box.send_keys("Which Callers Depend")  # case does not matter
    out = root.find_element(By.CSS_SELECTOR, ".pse-find-results")
    WebDriverWait(driver, 10).until(lambda d: out.get_attribute("data-count") is not None)
    assert int(out.get_attribute("data-count")) == len(sending)
    hits = driver.execute_script(
        "return [...document.querySelectorAll('.pse-find-hit')].map(h => [h.dataset.part, Number(h.dataset.variants),"
        " [...h.querySelectorAll('a.pse-vlink')].map(a => [a.textContent, a.href])])")
    assert [h[0] for h in hits] == ["review_checklist"] * len(hits)
    assert sum(h[1] for h in hits) == len(sending)
    listed = [link for h in hits for link in h[2]]
    assert listed and {text for text, _ in listed} <= sending
    for text, href in listed:
        v = next(v for v in result.variants if v.id == text)
        assert href == f"{base}/embedded/prompts/variants/{v.slug}/"
    # Whole words: a word cut short matches nothing.
    box.clear()
    box.send_keys("which callers dep")
    driver.find_element(By.CSS_SELECTOR, ".pse-find-whole input").click()
    WebDriverWait(driver, 10).until(lambda d: out.get_attribute("data-count") == "0")
    assert _errors(driver) == []


def test_conformance_page_and_badges_render(driver, conformance_site):
    base, result = conformance_site
    url, v = _variant_url(base, "conformance", result, result.variants[0].id)
    _open(driver, url)
    badge = driver.find_element(By.CSS_SELECTOR, ".ps-badge-differs")
    assert badge.is_displayed() and badge.text == "differs from Codex 0.125.0"
    badge.click()
    WebDriverWait(driver, 30).until(lambda d: "/prompts/conformance/" in d.current_url)
    body = driver.find_element(By.TAG_NAME, "body").text
    assert "1 of 2 compared variants are byte-identical" in body
    assert "+promptspec <script>alert(4)</script>" in body  # the diff is shown as text, never run
    assert not driver.find_elements(By.CSS_SELECTOR, "article script")
    assert _errors(driver) == []
    _open(driver, _variant_url(base, "conformance", result, result.variants[1].id)[0])
    assert driver.find_element(By.CSS_SELECTOR, ".ps-badge-identical").text == "identical to Codex 0.125.0"


SCROLLED_FIRST_COLUMN = """
const out = [];
document.querySelectorAll('.md-content table').forEach(t => {
  const frame = t.closest('.md-typeset__scrollwrap') || t.parentElement;
  if (frame.scrollWidth <= frame.clientWidth + 1) return;
  frame.scrollLeft = frame.scrollWidth;  // as far right as it goes
  const cell = t.tBodies[0].rows[0].cells[0];
  const f = frame.getBoundingClientRect(), c = cell.getBoundingClientRect();
  out.push({head: (t.rows[0] || {}).textContent.slice(0, 40), scrolled: frame.scrollLeft, frameLeft: f.left, cellLeft: c.left,
            cellRight: c.right});
});
return out;
"""


@pytest.mark.parametrize("path", ["prompts/", "prompts/models/harbor-5/"])
def test_on_a_phone_a_scrolled_table_keeps_its_first_column_in_view(driver, embedded, path):
    """Scroll each table that scrolls as far right as it goes and measure
    where its first column is: still at the frame's left edge (a sticky
    position that did not stick left it at x = -148 px)."""
    base, _ = embedded
    try:
        _set_width(driver, 390)
        _open(driver, f"{base}/embedded/{path}")
        found = driver.execute_script(SCROLLED_FIRST_COLUMN)
        assert found, "no table scrolls at 390 px here: the test would check nothing"
        for t in found:
            assert t["scrolled"] > 0, t
            assert t["frameLeft"] - 1 <= t["cellLeft"] <= t["frameLeft"] + 24, t  # at the left edge, inside the frame's padding
    finally:
        _set_width(driver, 1400)


def _table_frame(driver, selector: str) -> list:
    """[scrollWidth, clientWidth] of the frame that scrolls the first table matching `selector`, and its header text."""
    return driver.execute_script(
        "const t = document.querySelector(arguments[0]); const f = t.closest('.md-typeset__scrollwrap') || t.parentElement;"
        "return [f.scrollWidth, f.clientWidth, (t.rows[0] || {}).textContent];", selector)


def test_on_a_phone_the_facts_table_wraps_instead_of_scrolling(driver, embedded):
    base, _ = embedded
    try:
        _set_width(driver, 390)
        _open(driver, f"{base}/embedded/prompts/variants/harbor-5--friendly--plan--workspace-write/")
        sizes = _table_frame(driver, ".ps-facts table")
        assert sizes[0] <= sizes[1] + 1, sizes
    finally:
        _set_width(driver, 1400)


def _imported_like_spec(root: Path) -> Path:
    """The embedded spec with tools shaped as an import writes them: one owner,
    copies of a tool under suffixed names, sentence-long descriptions."""
    spec = root / "imported-like"
    shutil.copytree(TEMPLATES, spec)
    for f in (spec / "tools").glob("*.yaml"):
        f.write_text(re.sub(r"(?m)^owner: .*$", "owner: codex", f.read_text(encoding="utf-8")), encoding="utf-8")
    names = []
    for n in range(2, 6):
        name = f"request_user_input--{n}"
        names.append(name)
        (spec / "tools" / f"{name}.yaml").write_text(yaml.safe_dump({
            "description": "request_user_input, one of 5 definitions Codex sends: parameters.properties.questions differs; "
                           "no strict; when model = harbor-5, harbor-5-mini; sandbox_mode = read-only, workspace-write.",
            "owner": "codex",
            "definition": {"type": "function", "name": f"request_user_input_{n}", "description": "Ask the user a question.",
                           "strict": False, "parameters": {"type": "object", "properties": {}}}}, sort_keys=False), encoding="utf-8")
    text = (spec / "spec.yaml").read_text(encoding="utf-8")
    (spec / "spec.yaml").write_text(text.replace("web_search, harbor_jobs]", "web_search, " + ", ".join(names) + ", harbor_jobs]"),
                                    encoding="utf-8")
    return spec


def test_an_imported_like_tools_catalog_fits_1400_px(driver, www, tmp_path_factory):
    root, base = www
    work = tmp_path_factory.mktemp("browser-tools")
    _build(work, "tools", _imported_like_spec(work), root, variant_pages="none")
    _set_width(driver, 1400)
    _open(driver, f"{base}/tools/prompts/tools/")
    sizes = _table_frame(driver, ".md-content table")
    assert sizes[0] <= sizes[1] + 1, sizes
    assert "owner" not in sizes[2]  # one owner: said once above the table, not in a column


def test_conversation_page_shows_every_request_and_its_new_items(driver, embedded):
    """Each request of the long session: one table row per request with its
    tokens, the compactions named, and each request's new items exactly as
    the library assembles them."""
    from promptspec.measure.conversation import runs

    base, result = embedded
    run = next(r for r in runs(result.spec, result.variants, TokenCounter(persist=False)) if r.name == "long-session")
    _open(driver, f"{base}/embedded/prompts/conversations/long-session/")
    tables = driver.find_elements(By.CSS_SELECTOR, ".md-content table")
    rows = tables[0].find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == len(run.thread)
    kinds = [r.find_elements(By.TAG_NAME, "td")[2].text for r in rows]
    assert kinds.count("compaction") == 2
    totals = [int(r.find_elements(By.TAG_NAME, "td")[4].text.replace(",", "")) for r in rows]
    assert totals == [m.total for m in run.measures]
    notes = driver.find_element(By.CSS_SELECTOR, "ul.ps-conversation-compactions").text
    assert "auto" in notes and "manual" in notes
    requests = driver.find_elements(By.CSS_SELECTOR, "details.ps-conversation-request")
    compaction = requests[[t.kind for t in run.thread].index("compaction")]
    compaction.find_element(By.TAG_NAME, "summary").click()
    shown = [p.get_attribute("textContent") for p in compaction.find_elements(By.CSS_SELECTOR, "pre.ps-prompt")]
    expected = [s.text for m in run.thread[[t.kind for t in run.thread].index("compaction")].new_messages for s in m.sections]
    assert shown == expected and any("Condense this session" in t for t in shown)
    assert _errors(driver) == []
