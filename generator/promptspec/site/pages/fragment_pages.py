"""The fragment catalog, one page per fragment, and the assembly overview.
"""

from __future__ import annotations

from collections import OrderedDict

from . import lint_page as site_lint
from ..html import diagram
from ..html import mermaid
from . import summary as site_summary
from ..index import SectionUse, SiteIndex, spread
from ..html.markup import (
    Cell,
    block,
    h,
    ident,
    link,
    md_inline,
    num,
    pre,
    quoted,
    table,
)
from ..html.page_parts import PLACEHOLDER, conditions, join_blocks, page_head, para

# ---------------------------------------------------------------------------
# Fragments


def _conditions(f) -> str:
    requires = ["requires " + ", ".join(f"<code>{h(r)}</code>" for r in f.requires)] if f.requires else []
    return conditions(f.when, *requires)


def fragments_index_page(idx: SiteIndex) -> str:
    page = idx.fragment_page()
    out = page_head("Fragments", "Fragment catalog")
    out.append(block(para(
        f"{len(idx.spec.fragments)} fragments. A fragment renders as start marker + body + end marker "
        "and fills one slot of the layout (see "
        f"{link(idx.href(page, idx.assembly_page), 'Assembly')})."
    ), cls="ps-intro"))
    out.append("")
    rows = []
    for f in sorted(idx.spec.fragments, key=lambda f: f.name):
        uses = idx.fragment_uses.get(f.name, [])
        rows.append([
            link(idx.href(page, idx.fragment_page(f.name)), f"<code>{ident(f.name)}</code>"),
            h(f.role),
            f"<code>{ident(f.slot)}</code>",
            h(f.owner) or "–",
            h(f.description),
            Cell(f"{len({u.variant for u in uses})} / {len(idx.variants)}", "ps-r"),
            Cell(spread([u.tokens for u in uses]), "ps-r"),
        ])
    out += [table(["name", "role", "slot", "owner", "description", Cell("variants", "ps-r"), Cell("tokens", "ps-r")], rows), ""]
    return join_blocks(out)


def _built_from(uses) -> str:
    """Every file its sections were built from, over all variants (models.json and spec.yaml fields by name),
    with how many variants each reaches."""
    counts: dict[str, set[int]] = {}
    for i, u in enumerate(uses):
        for r in u.section.sources:
            counts.setdefault(r.key, set()).add(i)
    if not counts:
        return "–"
    return ", ".join(f"<code>{h(k)}</code> ({len(v)})" for k, v in sorted(counts.items()))


def fragment_page(idx: SiteIndex, name: str) -> str:
    page = idx.fragment_page(name)
    f = next(x for x in idx.spec.fragments if x.name == name)
    uses = idx.fragment_uses.get(name, [])
    out = page_head(f"{name} · fragment", f"Fragment {name}")
    out.append(block(para(
        f"{link(idx.href(page, idx.fragment_page()), 'All fragments')} · {link(idx.href(page, idx.assembly_page), 'Assembly')}"
    ), cls="ps-crumbs"))
    out.append("")
    group = idx.spec.slot_message(f.slot) if f.slot else ""
    rows: list[list[str | Cell]] = [
        [Cell("description", header=True), h(f.description) or "–"],
        [Cell("owner", header=True), h(f.owner) or "–"],
        [Cell("role", header=True), h(f.role)],
        [Cell("slot", header=True), (f"<code>{h(f.slot)}</code> in the {h(group.replace('_', ' '))} message" + (f", order {f.order}" if f.order else ""))
         if f.slot else "none: a later-turn text, sent where <code>turns:</code> names it (see the conversations)"],
        [Cell("start marker", header=True), quoted(f.start) if f.start else "none"],
        [Cell("end marker", header=True), quoted(f.end) if f.end else "none"],
        [Cell("defined in", header=True), f"<code>{h(f.source)}</code>" + (f" line {f.line}" if f.line else "")],
        [Cell("template", header=True), f"<code>{h(f.template_ref)}</code> ({h(f.engine)})"],
        [Cell("built from", header=True), _built_from(uses)],
        [Cell("applies", header=True), _conditions(f)],
        [Cell("included in", header=True), f"{len(uses)} of {len(idx.variants)} variants"],
        [Cell("tokens", header=True), spread([u.tokens for u in uses]) + (f" (Codex estimate {spread([u.estimate for u in uses])})" if uses else "")],
    ]
    out += [table([], rows, cls="ps-facts"), ""]
    out += site_lint.fragment_section(idx, name)
    # Distinct renderings, in order of first appearance.  Sections are
    # shared objects: group by object first, so each text is joined once.
    by_object: "OrderedDict[int, list[SectionUse]]" = OrderedDict()
    for u in uses:
        by_object.setdefault(id(u.section), []).append(u)
    groups: "OrderedDict[str, list[SectionUse]]" = OrderedDict()
    for us_ in by_object.values():
        groups.setdefault(us_[0].section.text, []).extend(us_)
    if len(by_object) > len(groups):  # a rendering made of several objects: back to matrix order
        rank = idx.memo.get("rank") or idx.memo.setdefault("rank", {v: i for i, v in enumerate(idx.variants)})
        for us_ in groups.values():
            us_.sort(key=lambda u: rank[u.variant])
    out += [f"## Renderings ({len(groups)})", ""]
    if not groups:
        out += [block(para("No variant includes this fragment (its conditions or an empty body leave it out everywhere)."), cls="ps-intro"), ""]
    listed = len(uses) <= idx.list_limit
    if groups and not listed:
        out += [block(para(
            f"In {len(uses):,} variants, more than {idx.list_limit:,}, so each rendering says which variants use it by their "
            f"axis values and links one of them; the {link(idx.explorer_href(page), 'Explorer')} shows any single variant."
        ), cls="ps-intro"), ""]
    within = site_summary.value_counts(idx, [u.variant for u in uses]) if not listed else {}
    for k, (text, us) in enumerate(groups.items(), 1):
        if listed:
            # Every variant that sends this rendering, with its tokens, in view
            # (not inside the collapsed text).
            variants = " · ".join(
                f'{link(idx.variant_href(page, u.variant), ident(u.variant.id))} <span class="ps-dim">{num(u.tokens)}</span>'
                for u in us
            )
        else:
            variants = (
                f"{site_summary.describe_group(idx, [u.variant for u in us], within)} — "
                f"for example {site_summary.vlink(idx, page, us[0].variant)}"
            )
        head = (
            f'<p class="ps-rendering-head"><strong>rendering {k}</strong> · {spread([u.tokens for u in us])} tokens · '
            f"in {len(us)} variant{'s' if len(us) != 1 else ''}</p>"
        )
        body = "\n".join([
            head,
            f'<p class="ps-variants">{variants}</p>',
            f'<details class="ps-section ps-role-{h(f.role)}">',
            f"<summary>text of rendering {k}</summary>",
            pre(text, attrs={"data-ps-rendering": str(k)}),
            "</details>",
        ])
        out += [block(body, cls="ps-prompt-part"), ""]
    return join_blocks(out)


# ---------------------------------------------------------------------------
# Assembly overview


def assembly_page(idx: SiteIndex) -> str:
    page = idx.assembly_page
    spec = idx.spec
    by_slot: dict[str, list[str]] = {}
    for f in sorted(spec.fragments, key=lambda f: (f.order, f.name)):
        by_slot.setdefault(f.slot, []).append(f.name)
    out = page_head("Assembly", "How a request is assembled")
    out.append(block(para(
        "A request is the base instructions followed by messages. Every slot of the developer message "
        "contributes its fragments' sections to one developer message; each section in a separate-developer "
        "slot becomes its own developer message; the user slots make one user message. Within a slot, "
        "fragments go by <code>order</code>, then name. A fragment that does not apply to a variant, or "
        "renders empty, is left out."
    ), cls="ps-intro"))
    if idx.diagrams == "mermaid":
        drawn = mermaid.fence(mermaid.assembly(spec, by_slot))
    else:
        drawn = diagram.assembly(spec, by_slot, lambda name: idx.href(page, idx.fragment_page(name)))
    out += ["", drawn, ""]
    out += ["## Base instructions", ""]
    out.append(block(para(
        "An <code>instructions_override</code> wins; else a model's <code>instructions_template</code> with "
        f"<code>{PLACEHOLDER}</code> replaced by the personality's variable; else the model's "
        "<code>base_instructions</code>."
    ), cls="ps-intro"))
    out.append("")
    rows = []
    for model in spec.models:
        rules = []
        for p in spec.personalities:
            v = next((v for v in idx.variants if v.model == model.slug and v.personality == p.name), None)
            if v is None:
                continue
            b = idx.request[v].base
            rules.append(f"{h(p.name)}: <code>{h(b.rule)}</code>" + (f" <code>{h(b.detail)}</code>" if b.detail else ""))
        rows.append([link(idx.href(page, idx.axis_page("model", model.slug)), f"<code>{h(model.slug)}</code>"), "<br>".join(rules) or "–"])
    out += [table(["model", "rule per personality"], rows), ""]
    for group, slots in spec.layout.items():
        out += [f"## {md_inline(group.replace('_', ' '))} slots", ""]
        rows = []
        for slot in slots:
            names = by_slot.get(slot, [])
            frs = [next(f for f in spec.fragments if f.name == n) for n in names]
            cell = "<br>".join(
                f"{link(idx.href(page, idx.fragment_page(f.name)), f'<code>{h(f.name)}</code>')} <span class=\"ps-dim\">({_conditions(f)})</span>"
                for f in frs
            ) or '<span class="ps-dim">no fragment</span>'
            rows.append([f"<code>{ident(slot)}</code>", cell])
        out += [table(["slot", "fragments"], rows), ""]
    return join_blocks(out)
