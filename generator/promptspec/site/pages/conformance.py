"""The Conformance page and the variant pages' conformance badges, from a
stored `promptspec verify --out` report.

The site never runs the agent: it reads the report, so a build needs no Codex
binary, and a report older than the spec is shown as what it is (its date and
release are on the page).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import SpecError
from ...spec.files import read_regular_bytes
from ...verify.groups import differences_of, group
from ...verify.report import MAX_DIFFS, covered
from ...verify.report import load as load_report_data
from ..index import SiteIndex
from ..html.markup import block, front_matter, h
from ..html.page_parts import para

MAX_REPORT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Conformance:
    release: str
    date: str
    compared: int
    identical: int
    matrix_size: int
    not_modelled: tuple[str, ...]
    by_id: dict[str, dict[str, Any]]
    source: str
    covered: tuple[str, ...] = ()  # what "identical" covered (verify/report.covered)


def load(path: str | Path) -> Conformance:
    """A stored report, or a one-line error naming the file."""
    p = Path(path)
    try:
        if not p.is_file():
            raise SpecError("verify report not found", p, hint="write one with `promptspec verify --cli PATH --out FILE`")
        if p.stat().st_size > MAX_REPORT_BYTES:
            raise SpecError("verify report is too large", p, hint="store the report of one verify run")
        data = load_report_data(json.loads(read_regular_bytes(p, limit=MAX_REPORT_BYTES, what="verify report").decode("utf-8")))
        variants = {str(v["id"]): dict(v) for v in data["variants"]}
        return Conformance(str(data["codex_release"]), str(data["date"]), int(data["compared"]), int(data["identical"]),
                           int(data.get("matrix_size", 0)), tuple(str(x) for x in data.get("not_modelled", ())),
                           variants, p.name, tuple(covered(data)))
    except RecursionError:
        raise SpecError("verify report nests too deeply", p, hint="store the report of one verify run") from None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise SpecError(f"not a promptspec verify report ({' '.join(str(exc).split())[:80]})", p,
                        hint="write one with `promptspec verify --cli PATH --out FILE`") from None


def badge(idx: SiteIndex, v: Any) -> str:
    c: Conformance | None = getattr(idx, "conformance", None)
    if c is None:
        return ""
    entry = c.by_id.get(v.id)
    if entry is None:
        return ""
    page = idx.href(idx.variant_page(v), idx.conformance_page)
    if entry.get("identical"):
        return (f'<a class="ps-badge ps-badge-identical" href="{h(page)}" '
                f'title="byte-identical to what Codex {h(c.release)} sent ({h(c.date)})">identical to Codex {h(c.release)}</a>')
    names = [d["name"] for d in differences_of(entry)]
    anchor = f"#{h(anchor_of(names[0]))}" if names else ""
    return (f'<a class="ps-badge ps-badge-differs" href="{h(page)}{anchor}" '
            f'title="differs in: {h(", ".join(dict.fromkeys(names)))}">differs from Codex {h(c.release)}</a>')


def anchor_of(name: str) -> str:
    """The Conformance page's anchor for a group of differences ("tool update_plan" -> "differs-tool-update_plan")."""
    return "differs-" + "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name)


def page(idx: SiteIndex) -> str:
    """The report, grouped as the command line groups it (verify/groups.py): one
    entry per differing part with the variants it reaches by axis and each
    distinct diff once, so the page stays small whatever the matrix size."""
    c: Conformance = idx.conformance
    out = [front_matter({"title": "Conformance"}).rstrip("\n"), "", "# Conformance", ""]
    share = f"{c.identical} of {c.compared}"
    intro = (f"<strong>{share}</strong> compared variants are byte-identical to the first request Codex "
             f"<code>{h(c.release)}</code> sent (checked {h(c.date)}; the matrix has {c.matrix_size} variants; "
             f"report <code>{h(c.source)}</code>).")
    parts = [para(intro), para("Compared: " + "; ".join(h(x) for x in c.covered) + ".")]
    if c.not_modelled:
        parts.append(para("Not modelled, so not compared: " + ", ".join(h(x) for x in c.not_modelled) + "."))
    out += [block(parts, cls="ps-intro"), ""]
    groups = group(list(c.by_id.values()))
    if not groups:
        out += [para("No compared variant differs."), ""]
        return "\n".join(out) + "\n"
    out += ["## Differences", ""]
    for g in groups:
        inner = [f'<p id="{h(anchor_of(g.name))}"><strong>{h(g.name)}</strong> differs in {h(g.reach.counted())}</p>']
        for d in g.diffs[:MAX_DIFFS]:
            where = ", ".join(f"<code>{h(w)}</code>" for w in d.where)
            lead = f"{h(d.reach.counted())}, at {where}:" if len(g.diffs) > 1 else f"At {where}:"
            inner += [para(lead), f"<pre><code>{h(d.diff)}</code></pre>"]
        if len(g.diffs) > MAX_DIFFS:
            inner.append(para(f"… and {len(g.diffs) - MAX_DIFFS} more distinct diffs (all are in the report <code>{h(c.source)}</code>)."))
        out += [block(inner, cls="ps-change"), ""]
    return "\n".join(out) + "\n"
