"""One model of a change (review/change.py): the Changes page, `diff` and
`check` read the same Diff, whether the base is a lock or a pipeline Result.
"Now past auto-compaction" is one rule (change.headroom_crossings): a changed
variant that fit before and no longer does, an added variant that starts past
it; sorted by id."""

from __future__ import annotations

import json
import shutil

from promptspec import pipeline, review
from promptspec.measure.counter import TokenCounter
from promptspec.review import lockfile
from promptspec.review.change import Diff, VariantChange, VariantTotals, headroom_crossings
from promptspec.site.pages import changes as site_changes

from _helpers import TEMPLATES


def _variant(vid: str, before: int, after: int) -> VariantChange:
    return VariantChange(vid, 100, 120, 100, 120, "o200k_base", "o200k_base", before, after, None, (), ())


def test_the_page_and_the_diff_list_the_same_crossings() -> None:
    fits_then_not, still_fits, was_past = _variant("b/1", 50, -10), _variant("a/1", 50, 30), _variant("c/1", -5, -25)
    diff = Diff("base", "head", added=(VariantTotals("z/new", 10, 10, -1), VariantTotals("y/new", 10, 10, 3), VariantTotals("x/new", 10, None, None)),
                removed=(), changed=(fits_then_not, still_fits, was_past), unchanged=(), groups=())
    assert diff.headroom_crossings() == [("b/1", 50, -10), ("z/new", None, -1)]
    assert headroom_crossings([fits_then_not, still_fits, was_past], [("z/new", -1), ("a/new", -2)]) == [
        ("a/new", None, -2), ("b/1", 50, -10), ("z/new", None, -1)]
    assert site_changes.compared(diff).kind == "git" and not site_changes.disabled().compared


def test_a_lock_base_and_a_result_base_give_the_same_change(tmp_path) -> None:
    """The same edit compared with the base's Result and with the base's lock:
    the same variants, deltas and reach per part; only the texts are missing."""
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    body = spec / "fragments" / "realtime.md"
    body.write_text(body.read_text(encoding="utf-8") + "Say which file you change.\n", encoding="utf-8")
    counter = TokenCounter(tmp_path / "cache")
    base, head = pipeline.run(TEMPLATES, counter=counter), pipeline.run(spec, counter=counter)
    live = review.compare(base, head)
    locked = review.compare_to_lock(json.loads(lockfile.dumps(lockfile.build(base))), head)
    assert isinstance(locked, Diff) and (live.base_kind, locked.base_kind) == ("result", "lock")
    assert [(c.id, c.delta, c.headroom_before, c.headroom_after) for c in live.changed] == \
        [(c.id, c.delta, c.headroom_before, c.headroom_after) for c in locked.changed]
    assert live.changed and [(g.fragment, g.kind, g.variants, g.tokens) for g in live.groups] == \
        [(g.fragment, g.kind, g.variants, g.tokens) for g in locked.groups]
    assert all(g.after_text and g.diff for g in live.groups) and not any(g.after_text or g.diff for g in locked.groups)
    assert locked.status_of(live.changed[0].id) == live.status_of(live.changed[0].id) == "changed"
    assert not locked.matches and review.compare_to_lock(json.loads(lockfile.dumps(lockfile.build(head))), head).matches
