"""site/serve/search_input.py against Material's own search parser: what the index
reads of a page must not change when the page's excluded elements are
emptied -- on hand-picked traps of that parser, and on seeded random pages."""

from __future__ import annotations

import random

import pytest

from promptspec.site.serve.search_input import for_index

from _helpers import search_sections as sections

TABLE = '<div class="ps-table" data-search-exclude>\n<table><thead><tr><th>a</th></tr></thead><tbody><tr><td><a href="x/">1,234</a><br><code>b</code></td></tr></tbody></table>\n</div>'

EMPTIED = {
    "a table of figures": f'<h1 id="t">T</h1>\n<p>intro</p>\n{TABLE}\n<p>after</p>',
    "whitespace runs on both sides": f'<h2 id="a">A</h2>x \n{TABLE}\n\n{TABLE} y',
    "inside a paragraph": '<h2 id="a">A</h2><p>a<code data-search-exclude>x</code>b</p><p><code data-search-exclude>only</code></p>',
    "a quoted > in an attribute": '<h2 id="a">A</h2><pre class="p" data-search-exclude title="a>b"><code>x &lt; y</code></pre>z',
    "an excluded element inside another element of its tag": '<h2 id="a">A</h2><div class="o"><div data-search-exclude><p>x</p></div>text</div>',
    "nested excluded elements": '<h2 id="a">A</h2><figure data-search-exclude><pre data-search-exclude>x</pre><p>y</p></figure>after',
}

KEPT = {
    "before the first heading (the indexer's first section starts there)": f"{TABLE}<h2 id=\"a\">A</h2>text",
    "a heading inside (the indexer opens a section there)": '<h2 id="a">A</h2><div data-search-exclude><h3 id="b">B</h3>x</div>y',
    "an element of its own tag inside (the skip list matches by tag)": '<h2 id="a">A</h2><div data-search-exclude><div>in</div>after</div>z',
    "mis-nested insides": '<h2 id="a">A</h2><div data-search-exclude><b><i>x</b></i></div>y',
    "an unclosed element inside": '<h2 id="a">A</h2><div data-search-exclude><p>x</div>y',
    "an end tag of a void element": '<h2 id="a">A</h2><div data-search-exclude>x</br></div>y',
    "a comment inside": '<h2 id="a">A</h2><div data-search-exclude><!-- </div> -->x</div>y',
    "after a script": '<h2 id="a">A</h2><script>var s = "<h2>";</script><div data-search-exclude>x</div>y',
    "a self-closing excluded element": '<h2 id="a">A</h2><div data-search-exclude/>x<p>y</p>',
    "a void excluded element": '<h2 id="a">A</h2><img data-search-exclude src="x">y',
    "a stray < inside": '<h2 id="a">A</h2><div data-search-exclude>a < b</div>y',
    "never closed": '<h2 id="a">A</h2><div data-search-exclude><p>x</p>',
}


@pytest.mark.parametrize("html", EMPTIED.values(), ids=EMPTIED.keys())
def test_an_emptied_element_leaves_the_index_as_it_was(html: str) -> None:
    out = for_index(html)
    assert len(out) < len(html)
    assert sections(out) == sections(html)


@pytest.mark.parametrize("html", KEPT.values(), ids=KEPT.keys())
def test_an_element_whose_insides_could_count_is_left_whole(html: str) -> None:
    assert for_index(html) == html


def _random_page(rng: random.Random) -> str:
    """A page of headings, prose and excluded elements, some of them with
    insides that would trip the emptying: the pieces the generator writes,
    and the traps above."""
    words = ["a", "b c", " ", "\n", "  x ", "1,234", "&amp;", "\n\n", ""]

    def inline(depth: int) -> str:
        pick = rng.random()
        if depth > 2 or pick < 0.4:
            return rng.choice(words)
        tag = rng.choice(["a", "code", "b", "span", "sub"])
        attrs = rng.choice(["", ' href="x/"', ' class="ps-r"', " data-search-exclude"])
        return f"<{tag}{attrs}>{''.join(inline(depth + 1) for _ in range(rng.randint(0, 3)))}</{tag}>"

    def block(depth: int) -> str:
        pick = rng.random()
        if pick < 0.15:
            return f'<h{rng.randint(2, 4)} id="h{rng.randint(0, 99)}">{inline(2)}</h{rng.randint(2, 4) if rng.random() < 0.05 else 0}>'.replace("</h0>", "</h2>")
        if pick < 0.25:
            return rng.choice(["<br>", "<hr>", "<!-- c -->", "</p>", "<p>", "<div/>", "a < b", "</div>"])
        tag = rng.choice(["div", "p", "pre", "figure", "ul", "table", "details"])
        attrs = rng.choice(["", ' class="ps-table"', " data-search-exclude", ' data-search-exclude=""', " data-search-exclude"])
        inner = "".join(block(depth + 1) if depth < 3 and rng.random() < 0.5 else inline(1) for _ in range(rng.randint(0, 4)))
        return f"<{tag}{attrs}>{inner}</{tag}>" if rng.random() < 0.95 else f"<{tag}{attrs}>{inner}"

    start = '<h1 id="top">Page</h1>' if rng.random() < 0.9 else ""
    return start + rng.choice(["", "\n"]).join(block(0) for _ in range(rng.randint(1, 8)))


def test_random_pages_index_the_same_emptied() -> None:
    rng = random.Random(20261204)
    emptied = 0
    for n in range(1000):
        html = _random_page(rng)
        out = for_index(html)
        emptied += out != html
        assert sections(out) == sections(html), f"page {n}: {html!r}"
    assert emptied > 250, emptied  # the pages exercise emptying, not only refusals
