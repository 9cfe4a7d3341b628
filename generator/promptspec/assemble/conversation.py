"""A conversation: every request one thread sends, from a script of turns.

The first request is the variant's request (the same one `render` gives)
plus the user's message.  Each later one re-sends the previous input, the
assistant's answer, a context-update message per kind of change
(`turns.updates`), then the new user message and one message per skill it
mentions.  A compaction is a request of its own (the history plus the
compaction prompt, with its own parameters), after which the history is
rebuilt in the order `turns.compaction.history` gives.  The rules are the
spec's (spec/turns.py); this module only applies them, so a hand-written
spec and an imported release go through the same code.
"""

from __future__ import annotations

import dataclasses
import re
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Iterable, Mapping

from ..errors import SpecError
from ..spec.model import BUILTIN_AXES, Spec
from ..spec.provenance import SourceRef, Watch
from ..spec.readers.scripts import Script, Step, check_script
from ..spec.readers.turns import HistoryPiece, Partial
from .body import merge
from .builder import Assembler
from .thread_state import state_values
from .request import Message, Request, Section, Variant

DEFAULT_SUMMARY = "(summary)"
"""What an automatic compaction returns when the step gives no `summary`."""


@dataclass(frozen=True)
class ThreadRequest:
    """One request of a thread, and why it was sent."""

    step: int  # the script step (1-based) that sent it
    kind: str  # "turn" | "compaction"
    request: Request
    new: int  # index of the first input message this request adds (0: all, e.g. after a rebuild)
    reason: str = ""  # for compactions: manual, auto (usage over the limit) or model switch
    rebuilt: bool = False  # the history was rebuilt (after a compaction) before this turn

    @property
    def new_messages(self) -> tuple[Message, ...]:
        return self.request.messages[self.new:]


@dataclass(frozen=True)
class _State:
    variant: Variant
    overrides: tuple[tuple[str, Any], ...]  # settings that are scenario keys, as changed by `set`
    switched: tuple[str, ...] = ()  # what a later step's `set:` named since the start (`thread.switched`)

    def values(self, spec: Spec) -> dict[str, Any]:
        return state_values(spec, self.variant, {**spec.scenario, **dict(self.overrides)})


def _apply(spec: Spec, state: _State, settings: Iterable[tuple[str, Any]], later: bool = False) -> _State:
    """The state after a step's `set:`; `later`: a switch (not the thread's
    start), which `thread.switched` records."""
    axes = {name for name, _ in spec.axes}
    variant, overrides = state.variant, dict(state.overrides)
    settings = list(settings)
    switched = tuple(dict.fromkeys([*state.switched, *(k for k, _ in settings)])) if later else state.switched
    for key, value in settings:
        value = str(value) if key in axes else value
        if key in BUILTIN_AXES:
            variant = dataclasses.replace(variant, **{key: str(value)})  # type: ignore[arg-type]  # key is model, personality or mode
        elif key in axes:
            variant = dataclasses.replace(variant, extra=tuple((a, value if a == key else v) for a, v in variant.extra))
        else:
            overrides[key] = value
    return _State(variant, tuple(sorted(overrides.items())), switched)


def _text_message(role: str, text: str, name: str, source: str) -> Message:
    return Message(role, (Section(name, "turn", role, "", text, "", source),))


def compact_limit(spec: Spec, state: _State) -> tuple[int | None, str]:
    """The auto-compaction threshold in this state and where it comes from:
    the configured setting, else the catalog's auto_compact_token_limit, else
    `turns.compaction.percent` of the context window."""
    comp = spec.turns.compaction
    configured = dict(state.overrides).get(comp.limit_setting, spec.scenario.get(comp.limit_setting))
    if isinstance(configured, int) and not isinstance(configured, bool) and configured > 0:
        return configured, comp.limit_setting
    model = spec.model(state.variant.model)
    if model.auto_compact_token_limit:
        return model.auto_compact_token_limit, "auto_compact_token_limit"
    if model.context_window:
        return model.context_window * comp.percent // 100, f"{comp.percent}% of context_window"
    return None, "none"


_STATES: "weakref.WeakKeyDictionary[Assembler, dict[Any, Request]]" = weakref.WeakKeyDictionary()


def state_request(asm: Assembler, variant: Variant, overrides: tuple[tuple[str, Any], ...] = (),
                  start: Variant | None = None) -> Request:
    """`asm.assemble(variant, overrides, start=start)` with no thread context,
    kept as long as `asm` lives: a thread asks for its switched state's
    request at every later turn, and the threads of many start variants reach
    the same states (in the embedded spec's explorer a third of the
    assemblies were repeats).  Only threads ask, so a matrix's own requests
    are not held twice."""
    memo = _STATES.setdefault(asm, {})
    key = _state_key(variant, overrides, start)
    try:
        got = memo.get(key)
    except TypeError:  # a setting holding an unhashable value: not kept
        return asm.assemble(variant, overrides, None, start=start)
    if got is None:
        got = memo[key] = asm.assemble(variant, overrides, None, start=start)
    return got


def _state_key(variant: Variant, overrides: tuple[tuple[str, Any], ...] = (), start: Variant | None = None) -> Any:
    """How state_request keeps a state's request (know_first_requests puts the pipeline's there)."""
    return (variant, overrides, start)


class Conversation:
    """Builds the requests of scripts for one spec, sharing one Assembler."""

    def __init__(self, spec: Spec, asm: Assembler | None = None):
        self.spec = spec
        self.asm = asm or Assembler(spec)

    # -- pieces ---------------------------------------------------------------
    def _thread(self, start: _State, previous: _State, now: _State, request: str, turn: int, compacted: bool) -> dict[str, Any]:
        before, after = previous.values(self.spec), now.values(self.spec)
        return {"request": request, "turn": turn, "start": start.values(self.spec), "previous": before,
                "changed": [k for k in after if after[k] != before.get(k)], "compacted": compacted,
                "switched": list(now.switched)}

    def _keeps_base(self, start: Variant) -> bool:
        """Whether the thread keeps its first model's base instructions: `instructions: first`,
        when its first model matches `session.base` (a release that keeps them for one kind of model only)."""
        turns = self.spec.turns
        return turns.instructions == "first" and (turns.session_base is None
                                                  or turns.session_base.matches(start, self.spec.model(start.model)))

    def _updates(self, previous: _State, now: _State, thread: Mapping[str, Any]) -> list[Message]:
        """One message per `turns.updates` entry whose `on` names a change."""
        changed = set(thread["changed"])
        model = self.spec.model(now.variant.model)
        out: list[Message] = []
        for update in self.spec.turns.updates:
            why = changed.intersection(update.on)
            if not why or not update.when.matches(now.variant, model):
                continue
            sections = self.asm.later_sections(update.fragments, now.variant, now.overrides, thread)
            only_if_different = why <= set(update.if_different)
            before = (self.asm.later_sections(update.fragments, previous.variant, previous.overrides, thread)
                      if update.emptied or (sections and (only_if_different or update.partial)) else [])
            if update.emptied:  # a section gone empty goes as its markers (the state before's)
                have = {x.fragment for x in sections}
                sections = [dataclasses.replace(x, body="") for x in before if x.fragment not in have and x.start and x.end] + sections
                sections.sort(key=lambda x: update.fragments.index(x.fragment))
            if sections and (only_if_different or update.partial):
                if only_if_different and [x.text for x in before] == [x.text for x in sections]:
                    continue
                if update.partial:
                    was = {x.fragment: x.body for x in before}
                    sections = [dataclasses.replace(x, body=partial_body(was.get(x.fragment, ""), x.body, update.partial))
                                for x in sections]
            if not sections:
                continue
            if out and out[-1].role == update.role and update.role in self.spec.turns.join:
                out[-1] = Message(update.role, (*out[-1].sections, *sections))
            else:
                out.append(Message(update.role, tuple(sections)))
        return out

    def _skills(self, step: Step, state: _State, thread: Mapping[str, Any]) -> list[Message]:
        turns = self.spec.turns
        if turns.skill_fragment is None:
            return []
        names = list(step.skills)
        mention = re.escape(turns.skill_mention)
        for name in turns.skill_files:
            if name not in names and re.search(mention + re.escape(name) + r"(?![\w-])", step.text):
                names.append(name)
        out: list[Message] = []
        for name in names:
            ref = turns.skill_files[name]
            text, path = self.spec.fs.read_text(ref, origin="spec.yaml")
            skill = {"name": name, "path": ref, "text": text}
            sections = self.asm.later_sections((turns.skill_fragment,), state.variant, (*state.overrides, ("skill", skill)), thread)
            out.extend(Message(s.role, (s,)) for s in sections)
        return out

    def _request(self, state: _State, first: Request, messages: list[Message], params: Mapping[str, Any] | None = None) -> Request:
        """The state's request carrying `messages` as its input; the
        `instructions` field keeps the thread's first text unless
        `turns.instructions` is `current`."""
        now = state_request(self.asm, state.variant, state.overrides, first.variant) \
            if state.variant != first.variant or state.overrides else first
        base = first.base if self._keeps_base(first.variant) else now.base
        req = dataclasses.replace(now, messages=tuple(messages), base=base, notes=())
        if params is not None:  # a compaction request
            merged = merge(dict(req.params), {k: v for k, v in params.items() if k != "tools"})
            order = req.body_order
            tools, emptied = req.tools, False
            input_tools = self.spec.turns.compaction.input_tools
            if req.tool_placement == "input" and input_tools == "none":
                tools = ()
            elif "tools" in params and (req.tool_placement == "field" or input_tools == "params"):
                tools, emptied = (), req.tool_placement == "input"
            req = dataclasses.replace(req, params=tuple((k, merged[k]) for k in order if k in merged), tools=tools,
                                      empty_tools_item=emptied)
        return req

    def _rebuild(self, start: _State, previous: _State, state: _State, user_texts: list[Message], summary: str, turn: int) -> list[Message]:
        """The history after a compaction; its initial context is the current
        state's first request (`thread.previous`: the state before this turn's
        switch, if any), with the thread's first base instructions when the
        session keeps them (`turns.instructions: first`)."""
        comp = self.spec.turns.compaction
        thread = self._thread(start, previous, state, "rebuilt", turn, True)
        base_of = start.variant if self._keeps_base(start.variant) else None
        initial = []
        rebuilt = self.asm.assemble(state.variant, state.overrides, thread, base_of, start.variant)
        for m in rebuilt.messages:
            kept = tuple(x for x in m.sections if x.fragment not in comp.leave_out)
            if kept:
                initial.append(m if len(kept) == len(m.sections) else dataclasses.replace(m, sections=kept))
        summary_msgs: list[Message] = []
        if comp.summary is not None:
            sections = self.asm.later_sections((comp.summary,), state.variant, (*state.overrides, ("summary", summary)),
                                               {**thread, "request": "summary"})
            summary_msgs = [Message(s.role, (s,)) for s in sections]
        out: list[Message] = []
        for piece in comp.history:
            out.extend(_piece(piece, initial, user_texts, summary_msgs, rebuilt.base.text))
        return out

    # -- the thread -----------------------------------------------------------
    def requests(self, start_variant: Variant, script: Script) -> list[ThreadRequest]:
        spec = self.spec
        base_state = _State(start_variant, ())
        check_script(spec, script, base_state.values(spec))
        state = _apply(spec, base_state, script.steps[0].set)
        start = state
        first = state_request(self.asm, state.variant, state.overrides)
        out: list[ThreadRequest] = []
        history: list[Message] = []
        users: list[Message] = []
        reply: Step | None = None
        rebuilt = False
        for n, step in enumerate(script.steps, 1):
            before = len(history)
            if step.kind == "compact":
                if reply is not None:
                    history.append(self._reply(reply))
                out.append(self._compaction(n, state, first, history, "manual", 0 if rebuilt else before))
                history = self._rebuild(start, state, state, users, step.reply, n)
                reply, rebuilt = None, True
                continue
            now = _apply(spec, state, step.set, later=True) if n > 1 else state
            if n == 1:
                history = list(first.messages)
            else:
                if reply is not None:
                    history.append(self._reply(reply))
                reason = self._auto_reason(reply, state, now)
                if reason:
                    out.append(self._compaction(n, state, first, history, reason, 0 if rebuilt else before))
                    history = self._rebuild(start, state, now, users, step.summary or DEFAULT_SUMMARY, n)
                    rebuilt = True
                else:
                    history.extend(self._updates(state, now, self._thread(start, state, now, "update", n, rebuilt)))
            user = _text_message("user", step.text, "(user)", script.source)
            history.append(user)
            users.append(user)
            history.extend(self._skills(step, now, self._thread(start, state, now, "skill", n, rebuilt)))
            out.append(ThreadRequest(n, "turn", self._request(now, first, history), 0 if rebuilt else before, rebuilt=rebuilt))
            state, reply, rebuilt = now, step, False
        return out

    def _reply(self, step: Step) -> Message:
        turns = self.spec.turns
        section = Section("(reply)", "turn", "assistant", "", step.reply, "", "")
        return Message("assistant", (section,), turns.reply_item, turns.reply_content)

    def _auto_reason(self, reply: Step | None, state: _State, now: _State) -> str:
        comp = self.spec.turns.compaction
        if comp.prompt is None:
            return ""
        if reply is not None and reply.usage is not None:
            limit, source = compact_limit(self.spec, state)
            if limit is not None and reply.usage >= limit:
                return f"auto: usage {reply.usage} >= {limit} ({source})"
        if comp.on_model_switch and now.variant.model != state.variant.model:
            old = self.spec.model(state.variant.model).extra.get(comp.on_model_switch)
            new = self.spec.model(now.variant.model).extra.get(comp.on_model_switch)
            if old != new:
                return f"model switch across {comp.on_model_switch}"
        return ""

    def _compaction(self, n: int, state: _State, first: Request, history: list[Message], reason: str, new: int) -> ThreadRequest:
        comp = self.spec.turns.compaction
        thread = {"request": "compaction", "turn": n, "reason": reason}
        sections = self.asm.later_sections((comp.prompt,), state.variant, state.overrides, thread)
        prompt = [Message(s.role, (s,)) for s in sections]
        switching = reason.startswith("model switch") and comp.switch_when.matches(state.variant, self.spec.model(state.variant.model))
        params = merge(dict(comp.params), comp.switch_params) if switching else comp.params
        req = self._request(state, first, [*history, *prompt], params)
        return ThreadRequest(n, "compaction", req, new, reason)


TAG = re.compile(r"\s*<([A-Za-z_][\w.-]*)")


def line_key(line: str) -> str | None:
    """The name of a line for a partial update: the XML tag it opens with (None: no tag)."""
    m = TAG.match(line)
    return m.group(1) if m else None


def partial_body(before: str, body: str, partial: Partial) -> str:
    """The lines of `body` a partial update sends (spec/turns.py `Partial`):
    the changed ones, those `always` names, those tied `with` a sent line,
    and every line that opens with no tag."""
    was = {line_key(x): x for x in before.splitlines(keepends=True)}
    lines = body.splitlines(keepends=True)
    keys = [line_key(x) for x in lines]
    sent = {k for k, x in zip(keys, lines) if k is None or k in partial.always or was.get(k) != x}
    ties = dict(partial.with_)
    for _ in range(len(ties)):  # a tie to a tied line: follow the chain
        sent |= {k for k, other in ties.items() if other in sent}
    return "".join(x for k, x in zip(keys, lines) if k in sent)


def _piece(piece: HistoryPiece, initial: list[Message], users: list[Message], summary: list[Message], base: str) -> list[Message]:
    if piece.kind == "initial_context":
        return initial[piece.start:piece.stop]
    if piece.kind in ("initial_base", "initial_rest"):  # the message(s) holding the base instructions, or the others
        return [m for m in initial if any(s.body == base for s in m.sections) == (piece.kind == "initial_base")]
    if piece.kind == "user_messages":
        return list(users)
    if piece.kind == "earlier_user_messages":
        return list(users[:-1])
    if piece.kind == "last_user_message":
        return list(users[-1:])
    return list(summary)


class _Kept:
    """The threads of the latest Spec object (a loaded spec is never changed),
    the Assembler they share, and what each thread was built from, so that
    the next spec of a `mkdocs serve` session can keep the ones an edit did
    not reach (carry_threads)."""

    def __init__(self) -> None:
        self.reset(None)

    def reset(self, spec: Spec | None) -> None:
        self.spec = spec
        self.threads: dict[Any, tuple[ThreadRequest, ...]] = {}
        self.deps: dict[Any, _Deps] = {}
        self.asm: Assembler | None = None


@dataclass(frozen=True)
class _Deps:
    """What a thread was built from: the files it read (whole-file references;
    carry_threads checks their digests for files outside the spec folder), the
    paths of the fields it read, and the variants whose first requests it could
    take as the pipeline made them."""

    files: frozenset[SourceRef]
    fields: frozenset[str]
    variants: frozenset[Variant]


_LATEST = _Kept()


def conversation(spec: Spec, variant: Variant, script: Script, asm: Assembler | None = None) -> list[ThreadRequest]:
    """Every request of `script` started from `variant`.  Kept for the latest
    Spec object (a loaded spec is never changed): lint, which runs the scripts
    to see which files later requests read, and the site's conversation
    pages ask for the same threads in one build (`mkdocs serve`'s rebuilds),
    and a thread is built once; without `asm`, the threads of one spec share
    an Assembler (its templates parsed once, not once a thread)."""
    if asm is None:
        asm = _shared_assembler(spec)
    elif _LATEST.spec is not spec:
        _LATEST.reset(spec)
    key = (variant, script)
    try:
        thread = _LATEST.threads.get(key)
    except TypeError:  # a script holding an unhashable value: not kept
        return Conversation(spec, asm).requests(variant, script)
    if thread is None:
        # Everything the thread reads is watched, through every cache and
        # isolated frame: what carry_threads checks before keeping it.
        with spec.fs.log.watch() as seen:
            thread = _LATEST.threads[key] = tuple(Conversation(spec, asm).requests(variant, script))
        _LATEST.deps[key] = _deps_of(variant, thread, seen)
    return list(thread)


def _deps_of(variant: Variant, thread: tuple[ThreadRequest, ...], seen: Watch) -> _Deps:
    refs = seen.refs()
    variants = {variant}
    sections: dict[int, tuple[SourceRef, ...]] = {}  # each request re-sends the history: a Section looked at once
    for t in thread:  # what came in whole from a state's request (its sections, its base) was not read here
        variants.add(t.request.variant)
        refs.update(t.request.base.sources)
        for m in t.request.messages:
            for s in m.sections:
                sections[id(s)] = s.sources
    refs.update(*sections.values())
    return _Deps(frozenset(r for r in refs if not r.field), frozenset(r.path for r in refs if r.field), frozenset(variants))


def carry_threads(old: Spec, new: Spec, redone: Collection[Variant], changed: Collection[Path]) -> int:
    """Keep the threads of `old` that `new` (the same spec after an edit that
    was not global: pipeline.Session, which hashed every file of the spec
    folder to find the `changed` ones) would build the same, as threads of
    `new`; the number kept.  A thread is kept when no variant it starts from
    or switches to was assembled again (`redone`) and nothing it read changed:
    no file or field it read is a `changed` file, and a file it read from a
    root outside the spec folder, which the Session does not hash, still has
    the text it read.  Each file a kept thread read is read again through
    `new`'s confined reads, as building the thread would (lint's record of
    the files a run used).  A changed fragment definition keeps none: which
    fragments a later request sends is decided from the definitions."""
    keep: dict[Any, tuple[tuple[ThreadRequest, ...], _Deps]] = {}
    if _LATEST.spec is old and old.fragments == new.fragments:
        shown = {new.fs.display(p) for p in changed}
        same: dict[SourceRef, bool] = {}

        def unchanged(ref: SourceRef) -> bool:
            hit = same.get(ref)
            if hit is None:
                hit = ref.path not in shown
                if hit:
                    try:
                        text, path = new.fs.read_text(ref.path)
                    except SpecError:  # gone, or no longer a file the spec may read
                        hit = False
                    else:
                        hit = not ref.path.startswith("@") or new.fs.source_ref(path, text).digest == ref.digest
                same[ref] = hit
            return hit

        for key, thread in _LATEST.threads.items():
            deps = _LATEST.deps.get(key)
            if (deps is not None and deps.variants.isdisjoint(redone) and deps.fields.isdisjoint(shown)
                    and all(unchanged(r) for r in deps.files)):
                keep[key] = (thread, deps)
    _LATEST.reset(new)
    for key, (thread, deps) in keep.items():
        _LATEST.threads[key], _LATEST.deps[key] = thread, deps
    return len(keep)


def know_first_requests(spec: Spec, requests: Iterable[Request]) -> None:
    """Hand the threads of `spec` the first requests already assembled for it
    (the pipeline's, one per variant): a thread whose first step sets nothing
    starts with exactly its variant's first request, which is then taken as
    it is instead of assembled again.  The explorer runs every script from
    every variant, so that is one assembly of each of its threads."""
    memo = _STATES.setdefault(_shared_assembler(spec), {})
    for request in requests:
        memo.setdefault(_state_key(request.variant), request)


def _shared_assembler(spec: Spec) -> Assembler:
    """The Assembler the threads of the latest Spec object share (a new spec starts the kept threads afresh)."""
    if _LATEST.spec is not spec:
        _LATEST.reset(spec)
    if _LATEST.asm is None:
        _LATEST.asm = Assembler(spec)
    return _LATEST.asm


def forget_threads() -> None:
    """Drop the kept threads: a one-off build calls it once its pages are made,
    so the threads (full request bodies, a few hundred KB a model) are not held
    while MkDocs writes the site; serve keeps them for the next rebuild."""
    _LATEST.reset(None)


def request_after(spec: Spec, variant: Variant, script: Script, n: int, asm: Assembler | None = None) -> Request:
    """The first request of the state a thread is in once its first `n` steps'
    `set:` applied: what a release re-sends a section of, in a context update."""
    state = _State(variant, ())
    for step in script.steps[:n]:
        state = _apply(spec, state, step.set)
    return (asm or Assembler(spec)).assemble(state.variant, state.overrides)
