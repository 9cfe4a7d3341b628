"""The matrix: every variant of a spec (the product of its axes, filtered by
include/exclude), and finding one variant by its axis values.
"""

from __future__ import annotations

import itertools
from typing import Mapping

from ..errors import SpecError, UsageError
from ..spec.model import Spec
from .request import Variant


MAX_REQUEST_CHARS = 16 * 1024 * 1024
"""Largest assembled request (base instructions plus every section): sixteen
times the text any model's context window holds.  Each template is already
limited; this stops a thousand fragments of 2 MB each."""

MAX_RENDERED_CHARS = 256 * 1024 * 1024
"""Distinct rendered text one Assembler may produce over all variants (the
cache makes 10,000 real variants a few hundred KB)."""

MAX_VARIANTS = 100_000
"""Largest matrix (before include/exclude): each variant costs milliseconds and
a page, so a spec with 100 values on four axes is refused, not ground through."""


def matrix(spec: Spec) -> list[Variant]:
    """Every variant, in axis order: the product, filtered by include/exclude."""
    names = [name for name, _ in spec.axes]
    size = 1
    for _, values in spec.axes:
        size *= len(values)
    if size > MAX_VARIANTS:
        shape = " x ".join(f"{len(values)} {name}" for name, values in spec.axes)
        raise SpecError(
            f"the matrix has {size} variants ({shape}), over the {MAX_VARIANTS} limit",
            "spec.yaml",
            hint="use fewer axis values, or matrix include/exclude rules on a smaller spec",
        )
    out = []
    for combo in itertools.product(*(values for _, values in spec.axes)):
        extra = tuple(zip(names[3:], combo[3:]))
        v = Variant(combo[0], combo[1], combo[2], extra)
        model = spec.model(v.model)
        if spec.include and not any(r.when.matches(v, model) for r in spec.include):
            continue
        if any(r.when.matches(v, model) for r in spec.exclude):
            continue
        out.append(v)
    _check_unique_variant_slugs(out)
    return out


def _check_unique_variant_slugs(variants: list[Variant]) -> None:
    """Slugs become file names: values containing '--' could make two variants
    share one (`a--b`/`c` and `a`/`b--c`), and case-insensitive file systems
    fold `A` and `a`."""
    seen: dict[str, Variant] = {}
    for v in variants:
        key = v.slug.lower()
        if key in seen:
            raise SpecError(
                f"variants {seen[key].id!r} and {v.id!r} would share the file name {v.slug!r}",
                "spec.yaml",
                hint="rename an axis value so that no value contains '--' and names differ in more than case",
            )
        seen[key] = v


def find_variant(spec: Spec, model: str | None, personality: str | None, mode: str | None, extra: Mapping[str, str] | None = None) -> Variant:
    """Resolve a command-line request to a variant, with a clear error if unknown."""
    extra = dict(extra or {})
    chosen: dict[str, str] = {}
    for axis, values in spec.axes:
        given = {"model": model, "personality": personality, "mode": mode}.get(axis, extra.pop(axis, None))
        if given is None:
            given = values[0] if axis != "personality" or "default" not in values else "default"
        if given not in values and given in spec.refuse.get(axis, {}):
            raise UsageError(f"{axis} {given!r}: {spec.refuse[axis][given]}")
        if given not in values:
            raise UsageError(f"unknown {axis} {given!r}; known: {', '.join(values)}")
        chosen[axis] = given
    if extra:
        raise UsageError(f"unknown axis {sorted(extra)[0]!r}; axes: {', '.join(a for a, _ in spec.axes)}")
    v = Variant(chosen["model"], chosen["personality"], chosen["mode"], tuple((a, chosen[a]) for a, _ in spec.axes[3:]))
    if v not in set(matrix(spec)):
        raise UsageError(f"variant {v.id} is excluded by the spec's matrix rules")
    return v


# ---------------------------------------------------------------------------
# Base instructions


