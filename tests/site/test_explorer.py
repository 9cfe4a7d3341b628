"""The variant explorer: one page and a data file that grows with the spec's
distinct text, not with the number of variants.

The data is decoded with `explorer.decode` (the reference the browser script
mirrors) and compared with real assembled requests; a headless Chromium then
checks that the browser script shows the same text.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import threading
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from promptspec import pipeline
from promptspec.site import explorer
from promptspec.site.explorer import data as explorer_data
from promptspec.errors import UsageError
from promptspec.measure.counter import TokenCounter

from required import browser

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "templates"


# ---------------------------------------------------------------------------
# Specs


def copy_spec(
    dest: Path,
    *,
    axes: dict[str, list[str]] | None = None,
    copies: int = 0,
    include: list[dict] | None = None,
    fragments: dict[str, dict] | None = None,
) -> Path:
    """The embedded spec, copied to `dest`, with extra axes, `copies` more
    copies of its models (new slugs, slightly different text and window),
    include rules and extra fragments.  Every approval_policy value gets its
    own text file, so the axis changes the permissions text."""
    shutil.copytree(TEMPLATES, dest)
    spec = yaml.safe_load((dest / "spec.yaml").read_text(encoding="utf-8"))
    spec.setdefault("axes", {}).update(axes or {})
    if include:
        spec.setdefault("matrix", {})["include"] = include
    for name in spec["axes"].get("approval_policy", []) + [spec["scenario"]["approval_policy"]]:
        path = dest / "permissions" / "approval" / f"{name}.md"
        if not path.exists():
            path.write_text(f"Approvals: `{name}`. Ask before anything policy {name} names.\n", encoding="utf-8")
    (dest / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    if copies:
        data = json.loads((dest / "models.json").read_text(encoding="utf-8"))
        originals = list(data["models"])
        for k in range(copies):
            model = json.loads(json.dumps(originals[k % len(originals)]))
            model["slug"] = f"{model['slug']}-c{k}"
            note = f"\nModel copy {k}.\n"
            if model.get("base_instructions"):
                model["base_instructions"] += note
            if (model.get("model_messages") or {}).get("instructions_template"):
                model["model_messages"]["instructions_template"] += note
            model["context_window"] += 1000 * (k + 1)
            data["models"].append(model)
        (dest / "models.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    for name, definition in (fragments or {}).items():
        (dest / "fragments" / f"{name}.yaml").write_text(yaml.safe_dump(definition, sort_keys=False), encoding="utf-8")
    return dest


def run(spec_dir: Path, tmp_path: Path) -> pipeline.Result:
    return pipeline.run(spec_dir, counter=TokenCounter(tmp_path / "token-cache"))


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("embedded")
    result = pipeline.run(TEMPLATES, counter=TokenCounter(tmp / "cache"))
    return result, explorer.build(result)


def conversation_texts(result: pipeline.Result, variants=None) -> set[str]:
    """Every text the spec's conversations add, from each of `variants` (default: all), built by the library."""
    from promptspec.assemble.conversation import conversation
    from promptspec.spec.readers.scripts import read_script

    spec = result.spec
    out: set[str] = set()
    for _, ref in spec.conversations:
        script = read_script(spec.root / ref, ref)
        for v in variants if variants is not None else result.variants:
            out |= {s.text for t in conversation(spec, v, script) for m in t.new_messages for s in m.sections}
    return out


def distinct_section_bytes(result: pipeline.Result) -> int:
    """UTF-8 bytes of the distinct section texts (base instructions not counted),
    those the conversations add from each model's first variant included."""
    firsts: dict[str, object] = {}
    for v in result.variants:
        firsts.setdefault(v.model, v)
    texts = {s.text for r in result.requests for _, _, s in r.sections} | conversation_texts(result, list(firsts.values()))
    return sum(len(t.encode("utf-8")) for t in texts)


# ---------------------------------------------------------------------------
# Exact reconstruction


def assert_matches(data, result):
    reader = explorer.Reader(data)
    for measure in result.measures:
        req = measure.request
        shown = reader.decode([v for _, v in req.variant.values])
        assert shown is not None, req.variant.id
        assert shown["id"] == req.variant.id
        assert shown["encoding"] == measure.encoding
        assert shown["base"] == {
            "text": req.base.text,
            "rule": req.base.rule,
            "detail": req.base.detail,
            "source": req.base.source,
            "tokens": measure.base,
        }
        assert [m["role"] for m in shown["messages"]] == [m.role for m in req.messages]
        for got, message, counts in zip(shown["messages"], req.messages, measure.sections):
            expected = [
                {
                    "fragment": s.fragment,
                    "slot": s.slot,
                    "source": s.source,
                    "text": s.text,
                    "start": s.start,
                    "end": s.end,
                    "tokens": n,
                }
                for s, n in zip(message.sections, counts)
            ]
            assert got["sections"] == expected, req.variant.id
            assert got["tokens"] == sum(counts)
        assert shown["tools"] == {
            "placement": req.tool_placement,
            "tokens": measure.tools,
            "tools": [
                {"tool": t.name, "name": t.tool_name, "kind": t.kind, "source": t.source, "json": t.serialized, "tokens": n}
                for t, n in zip(req.tools, measure.tool_counts)
            ],
            "deferred": [t.tool_name for t in req.deferred],
        }, req.variant.id
        assert shown["notes"] == list(req.notes)
        assert shown["total"] == measure.total


def test_every_variant_of_the_embedded_spec_reconstructs_exactly(embedded):
    result, data = embedded
    assert data["variants"] == len(result.variants) > 50
    assert_matches(data, result)


def test_combinations_outside_the_matrix_decode_to_nothing(embedded):
    """The embedded spec excludes pair programming for the legacy model."""
    result, data = embedded
    axes = [values for _, values in data["axes"]]
    variants = {v.id for v in result.variants}
    import itertools

    excluded = 0
    reader = explorer.Reader(data)
    for combo in itertools.product(*axes):
        shown = reader.decode(list(combo))
        assert (shown is not None) == ("/".join(combo) in variants)
        excluded += shown is None
    assert excluded > 0


def test_include_rules_and_sparse_tables_reconstruct(tmp_path):
    spec_dir = copy_spec(
        tmp_path / "spec",
        axes={"approval_policy": ["on-request", "never", "untrusted"]},
        include=[{"model": "harbor-5", "mode": ["plan", "execute"]}, {"model": "harbor-4-legacy", "personality": "none"}],
    )
    result = run(spec_dir, tmp_path)
    data = explorer.build(result)
    product = 1
    for _, values in result.spec.axes:
        product *= len(values)
    assert data["variants"] == len(result.variants) < product / 2
    assert_matches(data, result)


def test_factor_keeps_only_the_axes_a_value_depends_on():
    # 3 x 4 x 5 product; the value depends on axes 0 and 2 only.
    sizes = [3, 4, 5]
    rows = [(a, b, c) for a in range(3) for b in range(4) for c in range(5)]
    coords = [[r[d] for r in rows] for d in range(3)]
    values = [10 * a + c for a, b, c in rows]
    deps, table = explorer_data._factor(coords, sizes, values)
    assert deps == [0, 2]
    assert len(table) == 15
    for (a, b, c), value in zip(rows, values):
        assert explorer_data._lookup([deps, table], (a, b, c), sizes) == value


def test_factor_stores_sparse_tables_when_few_cells_are_used():
    sizes = [50, 50]
    # 100 of 2,500 cells, and the value needs both axes.
    rows = [(i, (i * 7 + k) % 50) for i in range(50) for k in (0, 1)]
    coords = [[r[0] for r in rows], [r[1] for r in rows]]
    values = [a * 100 + b for a, b in rows]
    deps, table = explorer_data._factor(coords, sizes, values)
    assert deps == [0, 1]
    assert isinstance(table, dict) and len(table) == 100
    for row, value in zip(rows, values):
        assert explorer_data._lookup([deps, table], row, sizes) == value


# ---------------------------------------------------------------------------
# Size


def test_an_axis_that_changes_no_text_costs_almost_nothing(tmp_path):
    """Doubling the variants with an axis no template reads must not double
    the data: only the new value names are added."""
    small = copy_spec(tmp_path / "small", axes={"flavor": [f"flavor-{i}" for i in range(4)]})
    large = copy_spec(tmp_path / "large", axes={"flavor": [f"flavor-{i}" for i in range(8)]})
    r_small, r_large = run(small, tmp_path), run(large, tmp_path)
    assert len(r_large.variants) == 2 * len(r_small.variants)
    b_small, b_large = explorer.data_bytes(r_small), explorer.data_bytes(r_large)
    added = len(r_large.variants) - len(r_small.variants)
    assert (len(b_large) - len(b_small)) / added < 40
    data = json.loads(b_large)
    flavor = [name for name, _ in data["axes"]].index("flavor")
    columns = [data["columns"]["base"], data["columns"]["skeleton"], data["columns"]["notes"], *data["columns"]["sections"]]
    assert all(flavor not in deps for deps, _ in columns)


def test_a_large_matrix_stays_under_three_times_its_distinct_section_text(tmp_path):
    """12 models x 4 personalities x 4 modes x 2 sandbox modes x 4 approval
    policies x 3 flavors.  The base instructions are not counted against the
    bound: near-identical ones are stored as differences."""
    spec_dir = copy_spec(
        tmp_path / "spec",
        copies=9,  # 12 models
        axes={"approval_policy": ["on-request", "never", "untrusted", "on-failure"], "flavor": ["a", "b", "c"]},
    )
    result = run(spec_dir, tmp_path)
    assert len(result.variants) > 4000
    blob = explorer.data_bytes(result)
    text = distinct_section_bytes(result)
    assert len(blob) < 3 * text, (len(blob), text)
    assert len(blob) < 20 * len(result.variants)  # per-variant records would need more


# ---------------------------------------------------------------------------
# Determinism and files


def test_data_is_deterministic_and_compact(tmp_path, embedded):
    result, _ = embedded
    again = pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path / "fresh-cache"))
    first, second = explorer.data_bytes(result), explorer.data_bytes(again)
    assert first == second
    parsed = json.loads(first)
    assert json.dumps(parsed, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8") == first
    assert b"\n" not in first  # compact: newlines only ever appear escaped inside strings


def test_each_distinct_text_is_stored_once(embedded):
    result, data = embedded
    texts = explorer.unpack_texts(data["texts"])
    assert len(texts) == len(set(texts))
    expected = {r.base.text for r in result.requests} | {s.text for r in result.requests for _, _, s in r.sections}
    expected |= {t.serialized for t in result.spec.tools}  # each tool definition, as sent
    expected |= conversation_texts(result)  # what the conversations add, from every variant
    assert set(texts) == expected


SHARED = "Shared context 🚢 with a ship, ünïcödé and 𝒳 astral letters, long enough to be worth sharing. " * 2


@given(st.lists(st.tuples(st.sampled_from(["", SHARED, "x" * 40]), st.text(max_size=30), st.sampled_from(["", SHARED[::-1], "🚢" * 40])), max_size=12))
@settings(max_examples=200, deadline=None)
def test_packed_texts_unpack_exactly(parts):
    texts = list(dict.fromkeys(a + b + c for a, b, c in parts))
    packed = explorer_data._pack(texts)
    assert explorer.unpack_texts(packed) == texts
    for i, item in enumerate(packed):
        if not isinstance(item, str):
            assert item[0] < i and len(item[3]) < len(texts[i])


def test_near_identical_texts_are_stored_as_differences(tmp_path):
    """Model copies differ from their originals by one sentence; personality
    fills differ in one line: their base instructions are stored as deltas."""
    spec_dir = copy_spec(tmp_path / "spec", copies=6)
    result = run(spec_dir, tmp_path)
    data = explorer.build(result)
    bases = {b[0] for b in data["bases"]}
    packed = [data["texts"][i] for i in bases]
    assert sum(not isinstance(t, str) for t in packed) >= len(packed) - 3
    assert_matches(data, result)


def test_standalone_folder_is_complete_and_deterministic(tmp_path, embedded):
    result, data = embedded
    a = explorer.write_standalone(result, tmp_path / "a")
    b = explorer.write_standalone(result, tmp_path / "b")
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(["index.html", "explorer-data.json", "explorer-data.js", "explorer.js", "explorer.css"])
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes()
    assert json.loads((a / "explorer-data.json").read_bytes()) == data
    # Writing again replaces its own output; a folder with other files is refused.
    explorer.write_standalone(result, a)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError):
        explorer.write_standalone(result, tmp_path / "c")
    assert (tmp_path / "c" / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folders left behind


def test_page_html_is_one_inert_block(embedded):
    result, _ = embedded
    out = explorer.page_html('data/x"<y>.json', result.spec.axes)
    assert out.startswith('<div class="promptspec-explorer" data-src="data/x&quot;&lt;y&gt;.json">')
    assert out.rstrip().endswith("</div>")
    assert "\n\n" not in out  # Markdown would end the raw HTML block at a blank line
    assert '<script src="data/explorer.js" defer></script>' in out
    assert '<link rel="stylesheet" href="data/explorer.css">' in out
    for axis, values in result.spec.axes:
        assert f'<select data-axis="{axis}">' in out
        for value in values:
            assert f'<option value="{value}">' in out


def test_assets_are_packaged():
    js = explorer.asset_bytes("explorer.js").decode("utf-8")
    import re

    assert not re.search(r"\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|\beval\(|new Function", js)
    assert explorer.FORMAT in js
    assert explorer.asset_bytes("explorer.css")
    with pytest.raises(ValueError):
        explorer.asset_bytes("../plugin.py")


# ---------------------------------------------------------------------------
# In a real browser

HOSTILE = '</pre><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> & &amp; <b>bold</b>\n'


def _browser():
    chromium, chromedriver = browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(chromedriver), options=options)


@pytest.fixture
def served(tmp_path):
    """The standalone explorer of the embedded spec plus a fragment full of
    HTML, served on 127.0.0.1."""
    spec_dir = copy_spec(
        tmp_path / "spec",
        fragments={
            "hostile": {
                "description": "Text that looks like HTML must stay text.",
                "role": "user",
                "slot": "user_extensions",
                "start": "<hostile>",
                "end": "</hostile>",
                "text": HOSTILE,
            },
            # Two texts sharing a long prefix with astral characters: the
            # second is stored as a difference whose lengths count UTF-16 units.
            "emoji_a": {"role": "user", "slot": "user_extensions", "text": SHARED + "🚢 first ending.\n"},
            "emoji_b": {"role": "user", "slot": "user_extensions", "text": SHARED + "𝒳 second ending.\n"},
        },
    )
    result = run(spec_dir, tmp_path)
    out = explorer.write_standalone(result, tmp_path / "explorer")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield result, out, f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


def test_browser_shows_the_picked_variant_exactly(served):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    result, out, url = served
    driver = _browser()
    try:
        driver.get(url)
        root = driver.find_element(By.CSS_SELECTOR, ".promptspec-explorer")
        WebDriverWait(driver, 20).until(lambda d: root.get_attribute("data-ready") or root.get_attribute("data-error"))
        assert root.get_attribute("data-error") is None, root.find_element(By.CSS_SELECTOR, ".pse-status").text

        pick = {"model": "harbor-5-mini", "personality": "friendly", "mode": "plan", "sandbox_mode": "read-only"}
        for axis, value in pick.items():
            Select(driver.find_element(By.CSS_SELECTOR, f'select[data-axis="{axis}"]')).select_by_value(value)
        wanted = "/".join(pick[a] for a, _ in result.spec.axes)
        WebDriverWait(driver, 10).until(lambda d: root.get_attribute("data-variant") == wanted)

        request = next(r for r in result.requests if r.variant.id == wanted)
        measure = result.measure_of(request.variant)
        sections = {s.fragment: s for _, _, s in request.sections}
        env = sections["environment_context"]
        assert "<environment_context>" in env.text
        shown = driver.execute_script(
            "return document.querySelector('details[data-fragment=\"environment_context\"] pre').textContent"
        )
        assert shown == env.text
        # Text that looks like HTML is shown as text and never runs.
        hostile = driver.execute_script("return document.querySelector('details[data-fragment=\"hostile\"] pre').textContent")
        assert hostile == sections["hostile"].text
        packed = json.loads((out / "explorer-data.json").read_bytes())["texts"]
        assert any(not isinstance(t, str) and t[3].startswith("𝒳") for t in packed)  # emoji_b is a difference
        for name in ("emoji_a", "emoji_b"):
            text = driver.execute_script(f"return document.querySelector('details[data-fragment=\"{name}\"] pre').textContent")
            assert text == sections[name].text
        # The tool list: one block (and one bar segment), the definitions exactly as sent.
        assert request.tools, "the picked variant should carry tools"
        listed = driver.execute_script("var p = document.querySelector('details[data-kind=\"tools\"] pre'); return p && p.textContent")
        assert json.loads(listed) == [t.definition for t in request.tools]
        seg = driver.execute_script("var s = document.querySelector('.pse-seg-tools'); return s && s.textContent")
        assert seg == f"tools {measure.tools:,}"
        assert driver.execute_script("return window.__pwned === undefined")
        assert not driver.find_elements(By.CSS_SELECTOR, ".pse-prompt img, .pse-prompt b, .pse-prompt script")
        # Every section is shown in send order, with the bar and order list beside it.
        shown_fragments = driver.execute_script(
            "return Array.from(document.querySelectorAll('details[data-fragment]')).map(d => d.dataset.fragment)"
        )
        assert shown_fragments == [s.fragment for _, _, s in request.sections]
        tool_part = 1 if request.tools else 0  # the tool list: one more segment and one more order entry
        assert len(driver.find_elements(By.CSS_SELECTOR, ".pse-bar .pse-seg")) == len(shown_fragments) + 1 + tool_part
        assert len(driver.find_elements(By.CSS_SELECTOR, ".pse-order > li")) == len(request.messages) + 1 + tool_part
        summary = driver.find_element(By.CSS_SELECTOR, ".pse-summary").text
        assert f"{measure.total:,} tokens" in summary
        assert driver.current_url.endswith("#variant=" + wanted)

        # A combination the matrix rules exclude says so instead of showing a prompt.
        Select(driver.find_element(By.CSS_SELECTOR, 'select[data-axis="model"]')).select_by_value("harbor-4-legacy")
        Select(driver.find_element(By.CSS_SELECTOR, 'select[data-axis="mode"]')).select_by_value("pair_programming")
        WebDriverWait(driver, 10).until(lambda d: root.get_attribute("data-variant") == "")
        assert "not a variant" in driver.find_element(By.CSS_SELECTOR, ".pse-status").text

        # A link to a variant opens it.
        driver.get(url + "#variant=harbor-5/none/execute/workspace-write")
        root = driver.find_element(By.CSS_SELECTOR, ".promptspec-explorer")
        WebDriverWait(driver, 20).until(lambda d: root.get_attribute("data-variant") == "harbor-5/none/execute/workspace-write")
        # The site's pages link with a query (?variant=), which Zensical does not check as a heading anchor.
        driver.get(url + "?variant=harbor-5/friendly/plan/read-only")
        root = driver.find_element(By.CSS_SELECTOR, ".promptspec-explorer")
        WebDriverWait(driver, 20).until(lambda d: root.get_attribute("data-variant") == "harbor-5/friendly/plan/read-only")

        # Opened from disk (file://), the data comes from the script copy.
        driver.get((out / "index.html").as_uri())
        root = driver.find_element(By.CSS_SELECTOR, ".promptspec-explorer")
        WebDriverWait(driver, 20).until(lambda d: root.get_attribute("data-ready") or root.get_attribute("data-error"))
        assert root.get_attribute("data-ready") == "true"

        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
    finally:
        driver.quit()


def test_site_explorer_knows_which_variants_have_a_page(embedded):
    """The hub links of the explorer page: URL templates for a variant's page
    and JSON, and the ids of the variants that have them."""
    import html as html_mod

    from promptspec.site import build as site_build

    result = embedded[0]

    def root_attrs(site) -> dict[str, str]:
        page = site.pages["prompts/explorer/index.md"]
        tag = re.search(r'<div class="promptspec-explorer"([^>]*)>', page).group(1)
        return {k: html_mod.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', tag)}

    every = root_attrs(site_build.build_site(result, links="dir"))
    assert every["data-page-url"] == "../variants/{slug}/" and every["data-json-url"] == "../variants/{slug}.json"
    assert every["data-paged"] == "all"
    some = root_attrs(site_build.build_site(result, links="dir", variant_pages={"mode": "plan"}))
    assert json.loads(some["data-paged"]) == sorted(v.id for v in result.variants if v.mode == "plan")
    assert root_attrs(site_build.build_site(result, links="dir", variant_pages="none"))["data-paged"] == "none"
