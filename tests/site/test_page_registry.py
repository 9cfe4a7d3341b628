"""Page kinds are registered in one place (site/pages/registry.py): the
build makes every registered kind's pages and lists its nav entry, and a new
kind needs nothing but its module and one registration."""

from __future__ import annotations

from promptspec import pipeline
from promptspec.site import build
from promptspec.site.pages import registry

from _helpers import TEMPLATES


def test_a_registered_kind_is_built_and_listed(monkeypatch) -> None:
    result = pipeline.run(TEMPLATES)
    before = build.build_site(result, findings=())
    assert "prompts/extra.md" not in before.pages and ("Extra", "prompts/extra.md") not in before.nav

    def extra(idx, inputs):
        return {idx.page_path("extra.md"): f"# Extra\n\n{len(idx.variants)} variants\n"}

    kind = registry.PageKind("extra", extra, nav=lambda paths, axes: (("Extra", paths.page_path("extra.md")),),
                             files=lambda idx, inputs: {idx.page_path("extra.json"): "{}"})
    monkeypatch.setattr(registry, "PAGE_KINDS", (*registry.PAGE_KINDS, kind))
    site = build.build_site(result, findings=())
    assert site.pages["prompts/extra.md"] == f"# Extra\n\n{len(result.variants)} variants\n"
    assert site.files["prompts/extra.json"] == "{}"
    assert site.nav[-1] == ("Extra", "prompts/extra.md") and "prompts/extra.md" in site.in_nav
    assert build.overview_pages()[-1] == ("Extra", "prompts/extra.md")
    assert set(before.pages) == set(site.pages) - {"prompts/extra.md"}


def test_a_kind_that_is_not_present_makes_nothing(monkeypatch) -> None:
    result = pipeline.run(TEMPLATES)
    kind = registry.PageKind("never", lambda idx, inputs: {idx.page_path("never.md"): "x"},
                             nav=lambda paths, axes: (("Never", paths.page_path("never.md")),),
                             present=lambda idx, inputs: False, always=False)
    monkeypatch.setattr(registry, "PAGE_KINDS", (*registry.PAGE_KINDS, kind))
    site = build.build_site(result, findings=())
    assert "prompts/never.md" not in site.pages and ("Never", "prompts/never.md") not in site.nav
    assert ("Never", "prompts/never.md") not in build.overview_pages()


def test_every_kind_has_a_distinct_name_and_the_nav_keeps_its_order() -> None:
    names = [k.name for k in registry.PAGE_KINDS]
    assert len(names) == len(set(names))
    titles = [t for t, _ in build.overview_pages("prompts", ("effort",))]
    assert titles == ["Matrix", "Explorer", "Models", "Personalities", "Modes", "effort",
                      "Fragments", "Tools", "Assembly", "Lint", "Changes"]
