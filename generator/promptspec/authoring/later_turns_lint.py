"""What lint needs to know about later turns: the names their fragments may
read, and the files conversations use (so none is called an orphan)."""

from __future__ import annotations

from typing import Any

from ..errors import SpecError
from ..spec.model import Spec

LATER_NAMES = frozenset({"skill", "summary"})
"""What a later-turn fragment may read besides the context: the skill of a skill message, a compaction's summary."""


def conversation_files(spec: Spec) -> list[str]:
    """The scripts and SKILL.md files `conversations:` and `turns:` name; running
    the scripts (assembly only) notes what their later requests read."""
    refs = [ref for _, ref in spec.conversations] + list(spec.turns.skill_files.values() if spec.turns else ())
    if spec.conversations:
        from ..assemble.conversation import conversation
        from ..assemble.matrix import matrix
        from ..spec.readers.scripts import read_script

        starts: dict[str, Any] = {}
        for v in matrix(spec):
            starts.setdefault(v.model, v)
        for _, ref in spec.conversations:
            try:
                script = read_script(spec.fs.resolve(ref), ref)
                for v in starts.values():
                    conversation(spec, v, script)
            except SpecError:
                pass  # render reports a broken script; here it only means fewer files are seen as used
    return refs
