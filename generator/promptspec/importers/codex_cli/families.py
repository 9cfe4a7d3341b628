"""What a start with a model of another compaction family adds to the learned later turns.

The standard threads are learned from the first model's starts.  A model of
another family may differ where that start cannot show it: where its tools
go (a compaction request with `tools: []` empties the body's tool field but
leaves a tool list in the input alone, in 0.171.0), or whether a personality
change sends an update at all (0.171.0 sends none for gpt-5.5's family).  So
the compaction and personality threads are captured from such a start too,
and merged in:

- the compaction request's body keys: the union of what each start's
  compaction changes (one value per key);
- a personality update the other start does not send: its `when` names the
  families that do (the catalog field of `turns.compaction.on_model_switch`,
  else the models); and one only the other start sends (0.150.0's gpt-5.5
  beside a multi-agent v2 model) is learned from its threads, its `when`
  that start's family.

Its switch across families is captured too: session.py learns from it.
"""

from __future__ import annotations

from typing import Any

from ...oracle.thread import families as model_families
from .write_spec import ImportProblem

THREADS = ("compact-manual", "personality-friendly", "personality-none", "model-across-families")


def other_family(pairs: list[Any], first: Any, catalog: dict[str, Any], field: str) -> Any:
    """A start (variant, config) with a model of another `field` value than `first`'s,
    else None: the same settings as `first`, the spec's first such model."""
    families = model_families(catalog, field)
    cfg = first[1]
    return next((p for p in pairs if families.get(p[1].model) != families.get(cfg.model) and p[1].personality == cfg.personality
                 and p[1].mode == cfg.mode and p[1].sandbox_mode == cfg.sandbox_mode and p[1].approval_policy == cfg.approval_policy),
                None)


def merge_family(learned: Any, caps: dict[str, Any], model: str, family: Any, first_family: Any, field: str,
                 changed_params: Any, new_items: Any, own_updates: Any = None) -> None:
    """Merge what the other family's start shows into `learned.turns` (see the module docstring).
    `changed_params(turn, compaction)` and `new_items(bodies, n)` are the learner's own;
    `own_updates(threads)`: the updates those threads of the other start send, learned as
    from the first start (updates.learn_updates)."""
    comp = learned.turns.get("compaction")
    cap = caps.get("compact-manual")
    if comp is not None and cap is not None and not cap.refused and len(cap.bodies) == 3:
        params = comp.setdefault("params", {})
        for key, value in changed_params(*cap.bodies[:2]).items():
            if key in params and params[key] != value:
                raise ImportProblem(f"the compaction request sets {key} to two values for two compaction families (one rule per key)")
            params[key] = value
    sends = [u for u in learned.turns.get("updates", []) if "personality" in u["changed"]]
    names = [n for n in ("personality-friendly", "personality-none") if n in caps and not caps[n].refused and len(caps[n].bodies) == 2]
    if not sends and own_updates is not None and any(new_items(caps[n].bodies, 1)[1:-1] for n in names):
        # Only the other family's models send one: its own update, for its family alone.
        if family is None or family == first_family:
            raise ImportProblem(f"{model} sends a personality update the first start does not, and no {field} value tells its models apart")
        known = [(u["fragments"], u["role"]) for u in learned.turns.get("updates", [])]
        for u in own_updates(names):
            if (u["fragments"], u["role"]) in known:
                raise ImportProblem(f"{model}'s personality update re-sends a message another change sends ({u['fragments']})")
            learned.turns.setdefault("updates", []).append({**u, "when": {field: [family]}})
        return
    for name in ("personality-friendly", "personality-none"):
        cap = caps.get(name)
        if cap is None or cap.refused or len(cap.bodies) != 2 or not sends:
            continue
        if new_items(cap.bodies, 1)[1:-1]:
            continue  # it sends an update: the final check compares it
        if first_family is None or family == first_family:
            raise ImportProblem(f"thread {name}: {model} sends no personality update, and no {field} value tells its models apart")
        for u in sends:
            u["when"] = {field: [first_family]}
