"""Loading the base the site compares with: the I/O half of the Changes page.

The plugin option `base` (and `promptspec build --base`) is one of

* `lock` (default): the spec folder's prompts.lock.json, compared with
  review.compare_to_lock.  No lock yet is not an error: the Changes page says
  so and how to make one.
* `none`: no comparison.
* a git revision (`origin/main`, `HEAD~1`, a tag...) of the repository holding
  the spec, or another spec folder: that spec is loaded, assembled and counted
  (gitspec.open_side + pipeline.run) and compared with review.compare, as
  `promptspec diff BASE` does.

A base that cannot be read (malformed lock, unknown revision, a base spec
that does not load) raises a PromptspecError with one line; the caller decides
whether that stops the build.  `BaseLoader` keeps the last base Result, keyed
by the base's files, so `mkdocs serve` re-runs only the head after an edit.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..review.lockfile import LOCK_FILE
from .pages import changes as site_changes

KEYWORDS = ("lock", "none")


class BaseLoader:
    def __init__(self) -> None:
        self._cached: tuple[Any, Any, dict[str, str]] | None = None  # (key, base Result, base file digests)
        self._entries: dict[int, Any] = {}  # the head's lock entries (lockfile.variant_entries), for the next build

    def load(self, base: str, spec_dir: Path, head: Any, *, counter: Any = None, root: Path | None = None) -> site_changes.Changes:
        """The comparison of `head` (a pipeline.Result of `spec_dir`) with `base`.

        `root` is the folder a relative spec-folder base is taken from (the
        folder of mkdocs.yml; the current folder for the CLI)."""
        base = (base or "").strip()
        if not base:
            raise UsageError("option 'base' is empty; use lock, none, a git revision or a spec folder")
        if base == "none":
            return site_changes.disabled()
        if base == "lock":
            return load_lock(Path(spec_dir), head, memo=self._entries)
        return self._other(base, Path(spec_dir), head, counter, root)

    def _other(self, base: str, spec_dir: Path, head: Any, counter: Any, root: Path | None) -> site_changes.Changes:
        from .. import pipeline, review
        from ..review import gitspec

        with tempfile.TemporaryDirectory(prefix="promptspec-base-") as tmp:
            try:
                # A folder is written as ./path or dir:path, never guessed (gitspec.side_kind).
                source = gitspec.open_side(base, spec_dir=spec_dir, workdir=Path(tmp), root=root)
            except UsageError as exc:
                raise UsageError(f"base {base!r}: {exc.oneline()}") from None
            label = source.title if source.commit else base
            files = gitspec.digest_tree(source.path)
            key = (source.commit, tuple(sorted(files.items())))
            if self._cached is not None and self._cached[0] == key:
                result = self._cached[1]
            else:
                named = source if source.commit else gitspec.SpecSource(base, source.path)
                result = gitspec.load_side("base", named, lambda path: pipeline.run(path, counter=counter))
                self._cached = (key, result, files)
        diff = review.compare(result, head, base_label=label, head_label="working tree",
                              files=review.file_changes(files, gitspec.digest_tree(spec_dir)))
        return site_changes.compared(diff)


def load_lock(spec_dir: Path, head: Any, memo: dict[int, Any] | None = None) -> site_changes.Changes:
    """Compare `head` with the spec folder's lock (a missing lock is shown,
    not raised); `memo`: lockfile.variant_entries, kept across serve builds."""
    from .. import review
    from ..review import lockfile

    path = lockfile.default_path(spec_dir)
    if not path.is_file():
        return site_changes.missing_lock(LOCK_FILE)
    return site_changes.compared(review.compare_to_lock(lockfile.read(path), head, memo))
