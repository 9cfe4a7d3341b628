"""Two variants side by side: what does one send that the other does not?

"What does friendly add over pragmatic for harbor-5?" is a comparison of two
variants of one spec, section by section (matched by fragment name, base
instructions and tools included).  `compare_variants` is pure (a pipeline
Result in, a `Pair` out); the CLI (`promptspec compare A B`) and the site's
explorer both use it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import UsageError
from .change import INSTRUCTIONS, part_label, signed
from .diff import variant_states, section_diff, diff_labels


@dataclass(frozen=True)
class PairPart:
    name: str  # fragment name, INSTRUCTIONS, "tool:NAME", "(parameters)"
    label: str  # how the part reads: "section realtime <realtime_conversation>", "base instructions"
    kind: str  # "same" | "changed" | "only_a" | "only_b"
    tokens_a: int
    tokens_b: int
    diff: str  # unified diff from A to B ("" when the same)
    sources_a: tuple[str, ...]
    sources_b: tuple[str, ...]

    @property
    def delta(self) -> int:
        return self.tokens_b - self.tokens_a


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    total_a: int
    total_b: int
    axes: tuple[tuple[str, str, str], ...]  # (axis, value in A, value in B) for the axes that differ
    parts: tuple[PairPart, ...]

    @property
    def delta(self) -> int:
        return self.total_b - self.total_a

    @property
    def differing(self) -> tuple[PairPart, ...]:
        return tuple(p for p in self.parts if p.kind != "same")

    def to_data(self) -> dict[str, Any]:
        return {
            "a": self.a, "b": self.b, "total_a": self.total_a, "total_b": self.total_b, "delta": self.delta,
            "axes": [{"axis": ax, "a": va, "b": vb} for ax, va, vb in self.axes],
            "parts": [
                {"name": p.name, "label": p.label, "kind": p.kind, "tokens_a": p.tokens_a, "tokens_b": p.tokens_b, "delta": p.delta,
                 "diff": p.diff, "sources_a": list(p.sources_a), "sources_b": list(p.sources_b)}
                for p in self.parts
            ],
        }


def resolve_variant(result, ref: str, *, like: str | None = None) -> str:
    """A variant id from `ref`: a full id, or (for B) `axis=value[,axis=value]` changing A's values."""
    ids = [m.request.variant.id for m in result.measures]
    if ref in ids:
        return ref
    if like is not None and "=" in ref:
        axes = [a for a, _ in result.spec.axes]
        values = dict(zip(axes, like.split("/")))
        for item in ref.split(","):
            axis, _, value = item.partition("=")
            if axis.strip() not in values:
                raise UsageError(f"unknown axis {axis.strip()!r} in {ref!r} (axes: {', '.join(axes)})")
            values[axis.strip()] = value.strip()
        vid = "/".join(values[a] for a in axes)
        if vid in ids:
            return vid
        raise UsageError(f"no variant {vid} in the matrix (from {like} with {ref})")
    hint = ", ".join(ids[:3])
    raise UsageError(f"no variant {ref!r} in the matrix (ids look like {hint}; `promptspec list` shows them all)")


def compare_variants(result, a: str, b: str) -> Pair:
    """Section by section, A to B (see the module docstring)."""
    sides = variant_states(result, only=(a, b))
    if a not in sides or b not in sides:
        raise UsageError(f"no variant {a if a not in sides else b!r} in the matrix")
    ma, _, sa, ia, _ = sides[a]
    mb, _, sb, ib, _ = sides[b]
    parts = [_part(INSTRUCTIONS, ia, ib)]
    order = list(sa) + [n for n in sb if n not in sa]
    parts += [_part(name, sa.get(name), sb.get(name)) for name in order]
    axes = tuple((ax, va, vb) for (ax, _), va, vb in zip(result.spec.axes, a.split("/"), b.split("/")) if va != vb)
    return Pair(a, b, ma.total, mb.total, axes, tuple(parts))


def _part(name: str, sa: Any, sb: Any) -> PairPart:
    shown = sb or sa
    label = part_label(name) if name == INSTRUCTIONS or name.startswith(("tool:", "(")) else f"section {name}" + (
        f" {shown.label}" if shown.label and shown.label != f"({name})" else "")
    kind = "only_b" if sa is None else "only_a" if sb is None else ("same" if sa.text == sb.text else "changed")
    diff = ""
    if kind != "same":
        la, lb = diff_labels(name, shown.label, ())
        diff = section_diff(sa.text if sa else None, sb.text if sb else None, "A" + la[4:], "B" + lb[4:])
    keys = lambda st: tuple(sorted({r.key for r in st.sources})) if st is not None else ()  # noqa: E731
    return PairPart(name, label, kind, sa.tokens if sa else 0, sb.tokens if sb else 0, diff, keys(sa), keys(sb))



def pair_text(pair: Pair) -> str:
    out = [f"promptspec compare: A = {pair.a}  B = {pair.b}"]
    if pair.axes:
        out.append("differs in " + ", ".join(f"{ax}: {va} → {vb}" for ax, va, vb in pair.axes))
    out.append(f"total tokens: {pair.total_a} → {pair.total_b} ({signed(pair.delta)}); "
               f"{len(pair.differing)} of {len(pair.parts)} parts differ")
    for p in pair.parts:
        what = {"same": "same", "changed": "changed", "only_a": "only in A", "only_b": "only in B"}[p.kind]
        out.append(f"  {p.label}: {what}" + ("" if p.kind == "same" else f" ({p.tokens_a} → {p.tokens_b}, {signed(p.delta)})"))
    for p in pair.differing:
        out += ["", f"=== {p.label}: {p.kind.replace('_', ' ')}", p.diff.rstrip("\n")]
    return "\n".join(out) + "\n"


def pair_markdown(pair: Pair) -> str:
    from .report import fenced, md_code, md_escape

    out = [f"### promptspec: {md_code(pair.a)} → {md_code(pair.b)}", ""]
    if pair.axes:
        out += ["Differs in " + ", ".join(f"{md_escape(ax)}: {md_code(va)} → {md_code(vb)}" for ax, va, vb in pair.axes), ""]
    out += [f"**Total {pair.total_a} → {pair.total_b} tokens ({signed(pair.delta)})**; {len(pair.differing)} of {len(pair.parts)} parts differ.", ""]
    for p in pair.differing:
        out += [f"<details open><summary>{md_escape(p.label)}: {md_escape(p.kind.replace('_', ' '))}, "
                f"{p.tokens_a} → {p.tokens_b} tokens ({signed(p.delta)})</summary>", "", fenced(p.diff).rstrip("\n"), "", "</details>", ""]
    return "\n".join(out)


def format_pair(pair: Pair, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(pair.to_data(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    if fmt == "markdown":
        return pair_markdown(pair)
    return pair_text(pair)


def comparison_links(ids: Sequence[str], axes: Sequence[tuple[str, Sequence[str]]], axis: str, value: str) -> Mapping[str, tuple[str, str]]:
    """For an axis value's page: other value -> (A, B), a pair of variants that differ only in `axis`
    (the first variant with `value` and its neighbour with the other value), for "compare with" links."""
    names = [a for a, _ in axes]
    if axis not in names:
        return {}
    i = names.index(axis)
    present = set(ids)
    mine = [v for v in ids if v.split("/")[i] == value]
    out: dict[str, tuple[str, str]] = {}
    for other in dict(axes)[axis]:
        if other == value:
            continue
        for a in mine:
            parts = a.split("/")
            parts[i] = other
            b = "/".join(parts)
            if b in present:
                out[other] = (a, b)
                break
    return out


def compare_command(result, a: str, b: str, fmt: str) -> str:
    """`promptspec compare A B`: resolve the two ids (B may be AXIS=VALUE), compare, format."""
    first = resolve_variant(result, a)
    return format_pair(compare_variants(result, first, resolve_variant(result, b, like=first)), fmt)
