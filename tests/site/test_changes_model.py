"""The Changes page and a diff say "now past auto-compaction" by one rule
(review.diff.headroom_crossings): a changed variant that fit before and no
longer does, an added variant that starts past it; sorted by id."""

from __future__ import annotations

from promptspec.review.diff import Diff, VariantTotals, headroom_crossings
from promptspec.site.pages import changes as site_changes


def test_the_page_and_the_diff_list_the_same_crossings() -> None:
    fits_then_not = site_changes.VariantDelta("b/1", 100, 900, (), headroom_before=50, headroom_after=-10)
    still_fits = site_changes.VariantDelta("a/1", 100, 120, (), headroom_before=50, headroom_after=30)
    was_past = site_changes.VariantDelta("c/1", 100, 120, (), headroom_before=-5, headroom_after=-25)
    page = site_changes._with_status(kind="git", label="base", changed=(fits_then_not, still_fits, was_past),
                                     added=(("z/new", 10, -1), ("y/new", 10, 3), ("x/new", 10, None)))
    want = [("b/1", 50, -10), ("z/new", None, -1)]
    assert page.headroom_crossings() == want
    diff = Diff("base", "head", added=(VariantTotals("z/new", 10, 10, -1), VariantTotals("y/new", 10, 10, 3)),
                removed=(), changed=(), unchanged=(), groups=())
    assert diff.headroom_crossings() == [("z/new", None, -1)]
    assert headroom_crossings([fits_then_not, still_fits, was_past], [("z/new", -1), ("a/new", -2)]) == [
        ("a/new", None, -2), ("b/1", 50, -10), ("z/new", None, -1)]
