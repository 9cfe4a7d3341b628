"""The built site in a real browser: headless Chromium driven by Selenium.

The site is built from the embedded spec (and a hostile copy of it) with the
plugin's `mermaid_js` option pointing at a local Mermaid from the npm registry,
served by `python -m http.server`'s handler on 127.0.0.1, and the browser is
started with every other host unresolvable, so the pages must work offline:
no CDN, no web fonts.

Material renders each diagram into a *closed* shadow root; the test makes
`attachShadow` open (before any page script runs) so it can look at the SVG.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

from promptspec import pipeline
from promptspec.measure.counter import TokenCounter

from _helpers import TEMPLATES, build_ok, expected_sections, mkdocs_config

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
VARIANT = "harbor-5/friendly/plan/workspace-write"
HOSTILE_MARKER = '"]); click n1 alert(1) <b>&#35;</b>'  # short enough for a diagram label (40 chars)

selenium = pytest.importorskip("selenium", reason="selenium is not installed (pip install -e .[test])")
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
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.skip(f"headless browser tests need {', '.join(missing)} (apt-get install chromium chromium-driver)")


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
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed, so no local Mermaid copy (set PROMPTSPEC_MERMAID_JS or install npm)")
    prefix = tmp_path_factory.mktemp("npm")
    try:
        proc = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", "mermaid@11"],
            capture_output=True, text=True, timeout=600,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("npm install mermaid@11 timed out (offline?)")
    path = prefix / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
    if proc.returncode != 0 or not path.is_file():
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"npm install mermaid@11 failed (offline?): {last}")
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


def _build(root: Path, name: str, spec: Path, mermaid_js: Path, **options) -> None:
    """Build `spec` strict into root/www/name, the folder the test server serves."""
    build_ok(mkdocs_config(root / f"{name}-work", spec, mermaid_js=str(mermaid_js), site_dir=root / "www" / name, **options))


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


@pytest.fixture(scope="session")
def sites(mermaid_js, tmp_path_factory):
    """Both sites built, their pipeline results, and a server for them."""
    root = tmp_path_factory.mktemp("browser-sites")
    hostile = _hostile_spec(root)
    _build(root, "embedded", TEMPLATES, mermaid_js, conformance=str(_conformance_report(root)))
    _build(root, "hostile", hostile, mermaid_js)
    counter = TokenCounter(root / "cache")
    results = {"embedded": pipeline.run(TEMPLATES, counter=counter), "hostile": pipeline.run(hostile, counter=counter)}

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root / "www")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", results
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def driver(sites, tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
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
    drv = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
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


def test_matrix_page_loads_without_console_errors(driver, sites):
    base, results = sites
    _open(driver, f"{base}/embedded/prompts/")
    cells = driver.find_elements(By.CSS_SELECTOR, "td.ps-cell a")
    assert len(cells) == len(results["embedded"].variants)
    assert _errors(driver) == []


def test_variant_page_shows_exact_text_and_markers(driver, sites):
    base, results = sites
    url, v = _variant_url(base, "embedded", results["embedded"], VARIANT)
    _open(driver, url)
    summaries = [s.get_attribute("textContent") for s in driver.find_elements(By.CSS_SELECTOR, "details.ps-section > summary")]
    assert any("<environment_context>" in s for s in summaries)
    shown = driver.execute_script(
        "const out = {};"
        "document.querySelectorAll('pre.ps-prompt[data-ps-section]').forEach(p => out[p.dataset.psSection] = p.textContent);"
        "return out;"
    )
    assert shown == expected_sections(results["embedded"], v)
    _wait_for_diagram(driver)
    assert _errors(driver) == []


def test_variant_diagram_renders_to_svg(driver, sites):
    base, results = sites
    url, v = _variant_url(base, "embedded", results["embedded"], VARIANT)
    _open(driver, url)
    svg_text = _wait_for_diagram(driver)
    req = next(r for r in results["embedded"].requests if r.variant == v)
    for _, _, section in req.sections:
        assert section.fragment in svg_text
    assert "<environment_context>" in svg_text
    assert driver.find_elements(By.CSS_SELECTOR, "pre.mermaid") == []
    assert _errors(driver) == []


def test_collapsed_section_expands_on_click(driver, sites):
    base, results = sites
    url, _ = _variant_url(base, "embedded", results["embedded"], VARIANT)
    _open(driver, url)
    details = driver.find_element(By.CSS_SELECTOR, "details#s-0-1")
    text = details.find_element(By.CSS_SELECTOR, "pre.ps-prompt")
    assert details.get_attribute("open") is None
    assert not text.is_displayed()
    details.find_element(By.TAG_NAME, "summary").click()
    WebDriverWait(driver, 10).until(lambda d: text.is_displayed())
    assert details.get_attribute("open") is not None
    assert "<permissions instructions>" in text.text


def test_expand_all_button_opens_every_section(driver, sites):
    base, results = sites
    url, _ = _variant_url(base, "embedded", results["embedded"], VARIANT)
    _open(driver, url)
    button = WebDriverWait(driver, 10).until(EC.visibility_of_element_located((By.CSS_SELECTOR, ".ps-expand")))
    button.click()
    states = driver.execute_script("return [...document.querySelectorAll('details.ps-section')].map(d => d.open)")
    assert states and all(states)


def test_search_finds_a_fragment_by_name(driver, sites):
    base, _ = sites
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


def test_explorer_page_shows_a_picked_variant(driver, sites):
    """The explorer page of the built MkDocs site: data loads from the site
    itself (offline), picking values shows that variant's exact text, and a
    variant page's "open in explorer" link opens the same variant."""
    from selenium.webdriver.support.ui import Select

    base, results = sites
    result = results["embedded"]
    _open(driver, f"{base}/embedded/prompts/explorer/")
    root = driver.find_element(By.CSS_SELECTOR, ".promptspec-explorer")
    WebDriverWait(driver, 30).until(lambda d: root.get_attribute("data-ready") or root.get_attribute("data-error"))
    assert root.get_attribute("data-ready") == "true", driver.find_element(By.CSS_SELECTOR, ".pse-status").text
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


def test_conformance_page_and_badges_render(driver, sites):
    base, results = sites
    result = results["embedded"]
    url, v = _variant_url(base, "embedded", result, result.variants[0].id)
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
    _open(driver, _variant_url(base, "embedded", result, result.variants[1].id)[0])
    assert driver.find_element(By.CSS_SELECTOR, ".ps-badge-identical").text == "identical to Codex 0.125.0"
