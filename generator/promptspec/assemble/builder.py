"""Assembly: one variant of the matrix -> the exact request Codex would send.

The request is base instructions plus messages of sections, in the spec's
layout order (Codex's by default).  A section renders as start marker + body +
end marker with nothing in between.  Most sections are the same across many
variants, so rendering is cached by what a template actually reads: a
fragment that only mentions `cwd` renders once, not once per variant.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, cast

import jinja2
from jinja2 import meta, nodes

from ..errors import SpecError
from ..render.codex import codex_placeholder_names
from ..render.renderer import renderer_for
from ..spec.readers.exact import describe
from ..spec.model import BUILTIN_NAMES, SLOT_ROLE, Choice, ExactPart, Fragment, Spec
from ..spec.provenance import SourceRef, digest, field_ref, ordered
from . import agents_md
from .body import body_params, exact_for, placement, select_tools
from .matrix import MAX_RENDERED_CHARS, MAX_REQUEST_CHARS, matrix
from .instructions import PERSONALITY_PLACEHOLDER, base_instructions
from .layouts import choose_layout, own_base_message, session_slots
from .request import BaseInstructions, Message, Request, Section, Variant
from .template_values import Record, freeze
from .thread_state import first_thread

# -- Rendering with a cache keyed by what each template reads --------------

_EVERYTHING = frozenset({"*"})


class Assembler:
    """Assembles variants of one spec, sharing work between them."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.renderer = renderer_for(spec)
        self._deps: dict[str, frozenset[str]] = {}
        self._cache: dict[Any, Any] = {}
        self._models = {m.slug: m for m in spec.models}
        self._frozen_memo: dict[int, tuple[Any, Any]] = {}
        self._sorted_deps: dict[frozenset[str], tuple[str, ...]] = {}
        self._rendered_chars = 0

    def _frozen(self, value: Any) -> Any:
        """`freeze(value)`, memoised by identity (the value is kept alive in the
        memo, so an id is never reused): scenario lists and mappings are the same
        objects in every variant, and re-freezing them per variant per section
        was a fifth of assembly time at 10k variants."""
        if isinstance(value, str):
            return value
        hit = self._frozen_memo.get(id(value))
        if hit is None or hit[0] is not value:
            hit = self._frozen_memo[id(value)] = (value, freeze(value))
        return hit[1]

    # -- dependencies -------------------------------------------------------
    def _template_deps(self, source: str, where: str, seen: frozenset[str] = frozenset()) -> frozenset[str]:
        key = where + "\x00" + source
        if key in self._deps:
            return self._deps[key]
        if where in seen:
            raise SpecError("circular include", where, hint="a template includes itself through others; break the cycle")
        try:
            tree = self.renderer.env.parse(source)
        except jinja2.TemplateSyntaxError as exc:
            raise SpecError(f"template syntax error: {exc.message}", where, line=exc.lineno, hint="fix the Jinja syntax") from None
        except RecursionError:
            raise SpecError("template nests too deeply", where, hint="simplify the expression") from None
        names = set(meta.find_undeclared_variables(tree)) - set(self.renderer.env.globals)
        for node in tree.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
            target = cast("nodes.Include", node).template  # all four carry `template`
            if isinstance(target, nodes.Const) and isinstance(target.value, str):
                try:
                    text, path = self.spec.fs.read_text(target.value, origin=where)
                except SpecError as exc:
                    # A refused or missing include is reported at the including line.
                    if exc.path == where:
                        raise SpecError(exc.message, where, line=node.lineno, hint=exc.hint) from None
                    if exc.message == "file not found":
                        raise SpecError(f"included file not found: {exc.path}", where, line=node.lineno, hint=exc.hint) from None
                    raise
                names |= self._template_deps(text, self.spec.fs.display(path), seen | {where})
            else:
                names |= _EVERYTHING
        deps = frozenset(names)
        self._deps[key] = deps
        return deps

    def _file_source(self, ref: str) -> tuple[str, str]:
        # Memoised per Assembler: resolving and displaying a path (realpath,
        # relative_to) per section per variant dominated assembly at 10k variants.
        hit = self._cache.get(("file", ref))
        if hit is None:
            text, path = self.spec.fs.read_text(ref)
            hit = self._cache[("file", ref)] = (text, self.spec.fs.display(path))
        return hit

    def _file_ref(self, ref: str) -> SourceRef:
        hit = self._cache.get(("file_ref", ref))
        if hit is None:
            text, path = self.spec.fs.read_text(ref)
            hit = self._cache[("file_ref", ref)] = self.spec.fs.source_ref(path, text)
        return hit

    def _render(self, engine: str, inline: str | None, ref: str | None, where: str, ctx: "_Context") -> str:
        """Render once per distinct input; the files and fields the output was
        built from are noted into the open provenance frames (on a cache hit
        too, from what the first render recorded)."""
        if inline is not None:
            source, shown = inline, where
        else:
            assert ref is not None
            source, shown = self._file_source(ref)
        if engine == "codex":
            deps = frozenset(codex_placeholder_names(source))
        else:
            deps = self._template_deps(source, shown)
        key = (engine, shown, source if inline is not None else None, ctx.key(deps))
        log = self.spec.fs.log
        hit = self._cache.get(key)
        if hit is not None:
            log.note_all(hit[1])
            text: str = hit[0]
            return text
        values = ctx.values(deps)
        with log.frame() as reads:
            if ref is not None:
                log.note(self._file_ref(ref))
            log.note_all(ctx.dep_sources(deps))
            out = self._render_text(engine, inline, ref, where, values)
        self._rendered_chars += len(out)
        if self._rendered_chars > MAX_RENDERED_CHARS:
            raise SpecError(
                f"the spec's templates render more than {MAX_RENDERED_CHARS} characters over all variants",
                shown,
                hint="a template that differs in every variant and is large? keep per-variant text small",
            )
        self._cache[key] = (out, frozenset(reads))
        return out

    def _render_text(self, engine: str, inline: str | None, ref: str | None, where: str, values: dict[str, Any]) -> str:
        if engine == "codex":
            if inline is not None:
                from ..render.codex import fill_placeholders

                return fill_placeholders(inline, values, where, self.renderer.limits.max_output_chars)
            return self.renderer.render_codex(ref, values)  # type: ignore[arg-type]
        if inline is not None:
            return self.renderer.render_string(inline, values, where)
        return self.renderer.render_file(ref, values)  # type: ignore[arg-type]

    # -- context --------------------------------------------------------------
    def _context(self, variant: Variant, overrides: tuple[tuple[str, Any], ...] = (), thread: Mapping[str, Any] | None = None, base_of: Variant | None = None) -> "_Context":
        key = ("ctx", variant, (freeze(overrides), freeze(thread), base_of))  # frozen once: a thread's dict is new at each request
        ctx = self._cache.get(key)
        if ctx is None:
            ctx = self._cache[key] = _Context(self, variant, overrides, thread, base_of, key[2])
        return ctx

    def choice_text(self, choice: Choice, kind: str, ctx: "_Context") -> str:
        return self.choice_text_sources(choice, kind, ctx)[0]

    def choice_text_sources(self, choice: Choice, kind: str, ctx: "_Context") -> tuple[str, tuple[SourceRef, ...]]:
        """A mode's or personality's text and what it was built from (recorded
        in an isolated frame: it is computed once per variant, and credited
        only to the sections that use it)."""
        if choice.template is None:
            return "", ()
        with self.spec.fs.log.frame(isolated=True) as reads:
            text = self._render(choice.engine, None, choice.template, f"{kind}s.{choice.name}", ctx)
        return text, ordered(reads)

    def _declared(self, kind: str, choice: Choice) -> SourceRef:
        """Where a personality or mode is declared (its entry in spec.yaml):
        the same for every variant with it, so made once per Assembler."""
        key = ("declared", kind, choice.name)
        hit = self._cache.get(key)
        if hit is None:
            spec = self.spec
            hit = self._cache[key] = field_ref(spec.fs.display(spec.root / "spec.yaml"), f"{kind}s.{choice.name}",
                                               [choice.display_name, choice.description, choice.template, choice.engine], choice.line)
        return hit

    def fragment_ref(self, fragment: Fragment) -> SourceRef:
        """The fragment's yaml definition, as a whole file."""
        hit = self._cache.get(("fragment_ref", fragment.source))
        if hit is None:
            hit = self._cache[("fragment_ref", fragment.source)] = self._file_ref(fragment.source)
        return hit

    # -- assembly -------------------------------------------------------------
    def applies(self, fragment: Fragment, variant: Variant) -> bool:
        return fragment.when.matches(variant, self.spec.model(variant.model))

    def section(self, fragment: Fragment, variant: Variant, ctx: "_Context") -> Section | None:
        fctx = ctx.with_fragment(fragment)
        if fragment.requires and self.spec.fs.log.watching:
            # Whether the section exists at all depends on these values: a kept
            # thread's dependencies must name them (conversation.carry_threads).
            self.spec.fs.log.note_all(fctx.dep_sources(frozenset(fragment.requires)))
        for name in fragment.requires:
            if not fctx.has(name):
                raise SpecError(
                    f"'requires' names {name!r}, which is not a scenario value", fragment.source, line=fragment.line,
                    hint="name a scenario key or one of the fragment's variables",
                )
            if not fctx.get(name, fragment):
                return None
        where = fragment.source
        with self.spec.fs.log.frame(isolated=True) as reads:
            reads.add(self.fragment_ref(fragment))
            stated = exact_for(self.spec, "fragment", fragment.name, variant, self._models[variant.model])
            if stated is not None:
                body = self._render("codex", None, stated.file, f"{where} ({describe(stated)})", fctx)
            else:
                body = self._render(fragment.engine, fragment.body, fragment.body_file, where, fctx)
            if body == "":
                return None
            start = self._marker(fragment, fragment.start, fctx)
            end = self._marker(fragment, fragment.end, fctx)
        role = fragment.role if fragment.later else SLOT_ROLE[self.spec.slot_message(fragment.slot)]
        source = fragment.body_file and self._file_source(fragment.body_file)[1] or where
        sources = frozenset(reads)
        skey = ("section", fragment.name, start, body, end, sources)
        cached = self._cache.get(skey)
        if cached is None:
            cached = Section(fragment.name, fragment.slot, role, start, body, end, source, ordered(sources))
            self._cache[skey] = cached
        return cached

    def _marker(self, fragment: Fragment, marker: str, ctx: "_Context") -> str:
        if "{" not in marker:
            return marker
        return self._render(fragment.engine, marker, None, f"{fragment.source} (marker)", ctx)

    def later_sections(self, names: Iterable[str], variant: Variant, overrides: tuple[tuple[str, Any], ...] = (),
                       thread: Mapping[str, Any] | None = None) -> list[Section]:
        """The named fragments rendered in one state of a thread (a context
        update, a skill message, the compaction prompt or summary), in the
        order given; a fragment whose `when` does not match, or whose text is
        empty, adds nothing."""
        ctx = self._context(variant, overrides, thread)
        by_name = self.spec.memo.get("fragments_by_name")
        if by_name is None:
            by_name = self.spec.memo["fragments_by_name"] = {f.name: f for f in self.spec.fragments}
        out = []
        for name in names:
            fragment = by_name[name]
            if self.applies(fragment, variant):
                section = self.section(fragment, variant, ctx)
                if section is not None:
                    out.append(section)
        return out

    def assemble(self, variant: Variant, overrides: tuple[tuple[str, Any], ...] = (), thread: Mapping[str, Any] | None = None, base_of: Variant | None = None, start: Variant | None = None) -> Request:
        """The first request of `variant`; in a thread, `overrides` are the settings changed since its start, `thread`
        what templates see of it, `base_of` whose base instructions `base` holds, `start` its first variant (turns.session)."""
        spec = self.spec
        model = self._models[variant.model]
        ctx = self._context(variant, overrides, thread, base_of)
        by_slot: dict[str, list[Fragment]] = {}
        rebuilt = thread is not None and thread.get("request") == "rebuilt"  # later fragments with a slot join it
        kept, first_v = session_slots(spec, variant, start)  # these sections are the thread's first model's
        first_ctx = self._context(first_v, overrides, thread, base_of) if kept else ctx
        for fragment in spec.fragments:
            if (not fragment.later or (rebuilt and fragment.slot)) and self.applies(fragment, first_v if fragment.slot in kept else variant):
                by_slot.setdefault(fragment.slot, []).append(fragment)
        messages: list[Message] = []
        size = len(ctx.base().text)
        chosen = choose_layout(spec, variant, start)
        # A thread's first layout (turns.session) with the base instructions in the field: no section places them.
        drop_base = start is not None and start.model != variant.model and chosen is not None and chosen.instructions == "field"
        if chosen is None:
            groups = [(group, SLOT_ROLE[group], slots) for group, slots in spec.layout.items()]
        else:
            groups = [("message", role, slots) for role, slots in chosen.messages]
            groups = own_base_message(spec, variant, start, chosen, groups, lambda slots: any(
                (sec := self.section(f, variant, ctx)) is not None and sec.body == ctx.base().text for slot in slots for f in by_slot.get(slot, ()) if not f.later))
        for group, role, slots in groups:
            collected: list[Section] = []
            for slot in slots:
                for fragment in sorted(by_slot.get(slot, ()), key=lambda f: (f.order, f.name)):
                    section = self.section(fragment, first_v, first_ctx) if slot in kept else self.section(fragment, variant, ctx)
                    if section is None or (drop_base and not fragment.later and section.body == ctx.base().text):
                        continue
                    size += len(section.start) + len(section.body) + len(section.end)
                    if size > MAX_REQUEST_CHARS:
                        raise SpecError(f"variant {variant.id} assembles to more than {MAX_REQUEST_CHARS} characters", fragment.source,
                                        line=fragment.line, hint="no model reads a prompt this long; make the fragments smaller")
                    if group == "separate_developer":
                        messages.append(Message(role, (section,)))
                    else:
                        collected.append(section)
            if collected:
                messages.append(Message(role, tuple(collected)))
        notes = []
        docs = ctx.docs()
        if docs is not None and docs.note():
            notes.append(docs.note())
        sent, deferred = select_tools(spec, variant, model, self._models[start.model]) if start is not None and start.model != variant.model else ctx.tools()
        order, params = body_params(spec, variant, model)
        return Request(
            variant, model.slug, ctx.base(), tuple(messages), tuple(n for n in notes if n),
            tools=sent, tool_placement=placement(spec, variant, model), deferred=deferred,
            body_order=order, params=params,
            instructions_field=chosen is None or chosen.instructions == "field",
        )


def _line_in(raw: Any, section: str, key: str) -> int | None:
    """The spec.yaml line of `section: {key: ...}`, when the loader kept it."""
    part = raw.get(section) if isinstance(raw, Mapping) else None
    line_of = getattr(part, "line_of", None)
    return line_of(key) if line_of is not None else None


_PER_VARIANT = frozenset({"model", "variant", "tools"})
"""Template values that depend on the variant alone (its model's fields, its axis values, its tools)."""


class _Context:
    """The values a variant's templates may read, computed lazily and once."""

    def __init__(self, asm: Assembler, variant: Variant, overrides: tuple[tuple[str, Any], ...], thread: Mapping[str, Any] | None,
                 base_of: Variant | None, state_key: tuple[Any, Any, Variant | None]):
        self.asm = asm
        self.variant = variant
        self.base_of = base_of or variant
        spec = asm.spec
        self.scalars: dict[str, Any] = dict(spec.scenario)
        self.tokens: dict[str, Any] = {}
        for axis, value in variant.extra:
            self.scalars[axis] = spec.aliases.get(axis, {}).get(value, value)
        self.scalars.update(overrides)
        self.scalars["thread"] = thread if thread is not None else first_thread(spec, variant, self.scalars)
        self.state_key = state_key  # (overrides, thread, base_of) frozen, as Assembler._context keys it
        self._lazy = {*BUILTIN_NAMES, *spec.derived}
        self._deriving: set[str] = set()
        self._derived_sources: dict[str, tuple[SourceRef, ...]] = {}
        self._values: dict[str, Any] = {}
        self._docs: agents_md.ProjectDocs | None = None
        self._docs_done = False
        self._base: BaseInstructions | None = None
        self.fragment: Fragment | None = None
        # Variant-level values (model, personality, agents_md...) are computed
        # here, never in a fragment's child context, so a fragment's variables
        # cannot leak into them through the shared `_values` memo.
        self._root = self

    def with_fragment(self, fragment: Fragment) -> "_Context":
        if not fragment.variables:
            return self
        child = _Context.__new__(_Context)
        child.__dict__.update(self.__dict__)
        child.scalars = {**self.scalars, **fragment.variables}
        child.tokens = {}
        child._values = self._values
        child.fragment = fragment
        return child

    def has(self, name: str) -> bool:
        return name in self.scalars or name in self._lazy

    def get(self, name: str, fragment: Fragment | None = None) -> Any:
        if fragment is not None and name in fragment.variables:
            return fragment.variables[name]
        if name in self.scalars:
            return self.scalars[name]
        if name in self._values:
            return self._values[name]
        if name in _PER_VARIANT:  # the same in every state of every thread of the variant: made once per Assembler
            # `model` is its model's fields alone: one Record per model, whichever variant asks.
            key = ("value", name, self.variant.model if name == "model" else self.variant)
            value = self.asm._cache.get(key)
            if value is None:
                value = self.asm._cache[key] = self._root._compute(name)
        else:
            value = self._root._compute(name)
        self._values[name] = value
        return value

    def _compute(self, name: str) -> Any:
        spec, v = self.asm.spec, self.variant
        log = spec.fs.log
        sources: dict[str, tuple[SourceRef, ...]]
        data: dict[str, Any]
        if name == "model":
            m = self.asm._models[v.model]
            data = {
                "slug": m.slug,
                "display_name": m.display_name,
                "description": m.description,
                "context_window": m.context_window,
                "max_context_window": m.max_context_window,
                "effective_context_window_percent": m.effective_context_window_percent,
                "auto_compact_token_limit": m.auto_compact_token_limit,
                "has_instructions_template": m.instructions_template is not None,
                "instructions_variables": dict(m.instructions_variables),
                "messages": m.messages,
                "bakes_personality": m.instructions_template is not None
                and PERSONALITY_PLACEHOLDER in m.instructions_template,
            }
            field = {"has_instructions_template": "model_messages.instructions_template", "bakes_personality": "model_messages.instructions_template",
                     "instructions_variables": "model_messages.instructions_variables"}
            raw = {"model_messages.instructions_template": m.instructions_template, "model_messages.instructions_variables": dict(m.instructions_variables)}
            sources = {}
            for key, value in data.items():
                where = field.get(key, key)
                sources[key] = (field_ref(spec.models_file, f"{m.slug}.{where}", raw.get(where, value), m.line),)
            return Record(("model", m.slug), data, sources, log)
        if name in ("personality", "mode"):
            choice = spec.personality(v.personality) if name == "personality" else spec.mode(v.mode)
            text, text_sources = self.asm.choice_text_sources(choice, name, self)
            data = {"name": choice.name, "display_name": choice.display_name, "description": choice.description, "text": text, **({"fills": choice.filled} if name == "personality" else {})}
            declared = self.asm._declared(name, choice)
            sources = {k: (declared,) for k in data}
            sources["text"] = (declared, *text_sources) if choice.template else (declared,)
            return Record((name, choice.name, text), data, sources, log)
        if name == "agents_md":
            docs = self.docs()
            return docs.text if docs else ""
        if name == "variant":
            return Record(("variant", v), dict(v.values, id=v.id))
        if name == "tools":
            sent, deferred = self.tools()
            data = {
                "sent": [t.tool_name for t in sent],
                "deferred": [{"name": t.tool_name, "description": t.sent_description} for t in deferred],
            }
            refs = tuple(SourceRef(t.source, "", t.line or 0, t.line or 0, digest(t.serialized)) for t in (*sent, *deferred))
            return Record(("tools", tuple(t.name for t in sent), tuple(t.name for t in deferred)), data, {k: refs for k in data}, log)
        if name in ("base", "model_base"):  # model_base: the current model's own, whatever the session keeps
            b = self.base() if name == "base" else self.base_for(v)
            data = {"text": b.text, "rule": b.rule, "detail": b.detail}
            return Record((name, b), data, {k: b.sources for k in data}, log)
        if name in spec.derived:
            if name in self._deriving:
                raise SpecError(f"derived value {name!r} depends on itself", "spec.yaml", hint="break the cycle in 'derived'")
            self._deriving.add(name)
            try:
                # Computed once per variant: its reads are kept apart and credited
                # to the templates that use the value (dep_sources).
                with log.frame(isolated=True) as reads:
                    value = self.asm._render("jinja", spec.derived[name], None, f"spec.yaml (derived {name})", self)
                self._derived_sources[name] = (field_ref("spec.yaml", f"derived.{name}", spec.derived[name], _line_in(spec.raw, "derived", name)),
                                               *ordered(reads))
                return value
            finally:
                self._deriving.discard(name)
        raise KeyError(name)

    def dep_sources(self, deps: frozenset[str]) -> tuple[SourceRef, ...]:
        """Where the plain values a template reads come from: scenario keys and
        axis values in spec.yaml, the AGENTS.md files behind `agents_md`.
        (Records such as `model` note their fields when read.)"""
        names = (set(self.scalars) | {"agents_md"}) if "*" in deps else deps
        out: list[SourceRef] = []
        spec = self.asm.spec
        extra = dict(self.variant.extra)
        for name in sorted(names):
            if self.fragment is not None and name in self.fragment.variables:
                continue  # the fragment's yaml is recorded already
            key: tuple[str, ...]
            if name in extra:
                key = ("axis_ref", name, extra[name])
                ref = self.asm._cache.get(key)
                if ref is None:
                    ref = self.asm._cache[key] = field_ref("spec.yaml", f"axes.{name}={extra[name]}", extra[name], _line_in(spec.raw, "axes", name))
                out.append(ref)
            elif name in spec.scenario:
                key = ("scenario_ref", name)
                ref = self.asm._cache.get(key)
                if ref is None:
                    ref = self.asm._cache[key] = field_ref("spec.yaml", f"scenario.{name}", spec.scenario[name], _line_in(spec.raw, "scenario", name))
                out.append(ref)
            elif name == "agents_md":
                docs = self.docs()
                if docs is not None:
                    out.extend(docs.refs)
            elif name in spec.derived:
                out.extend(self._root._derived_sources.get(name, ()))
        return tuple(out)

    def docs(self) -> agents_md.ProjectDocs | None:
        if not self._docs_done:
            spec = self.asm.spec
            cwd = self.scalars.get("cwd", spec.agents.project_root)
            key = ("docs", freeze(cwd))
            docs = self.asm._cache.get(key)
            if docs is None:
                docs = agents_md.discover(spec, agents_md.check_cwd(spec, cwd))
                self.asm._cache[key] = docs
            self._docs, self._docs_done = docs, True
        return self._docs

    def tools(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """(sent, deferred): the variant's alone, as `tools` (_PER_VARIANT), so made once per Assembler."""
        key = ("tools", self.variant)
        got = self.asm._cache.get(key)
        if got is None:
            spec = self.asm.spec
            got = self.asm._cache[key] = select_tools(spec, self.variant, self.asm._models[self.variant.model]) if spec.tools else ((), ())
        return got

    def base(self) -> BaseInstructions:
        """The base instructions the request holds (`base_of`'s: the session's first, in a rebuilt context)."""
        if self._base is None:
            self._base = self.base_for(self.base_of)
        return self._base

    def base_for(self, variant: Variant) -> BaseInstructions:
        spec, model = self.asm.spec, self.asm._models[variant.model]
        stated = exact_for(spec, "instructions", "", variant, model)
        if stated is not None:
            return self._exact_base(stated)
        key = ("base", variant.model, variant.personality)
        if key not in self.asm._cache:
            self.asm._cache[key] = base_instructions(self.asm.spec, model, variant.personality)
        return self.asm._cache[key]  # type: ignore[no-any-return]

    def _exact_base(self, stated: ExactPart) -> BaseInstructions:
        """Base instructions an `exact:` entry states: its file, placeholders filled."""
        asm = self.asm
        with asm.spec.fs.log.frame(isolated=True) as reads:
            text = asm._render("codex", None, stated.file, describe(stated), self)
        shown = asm._file_source(stated.file)[1]  # type: ignore[arg-type]
        return BaseInstructions(text, "exact", describe(stated), shown, ordered(reads))

    def token(self, name: str) -> Any:
        if name in self.tokens:
            return self.tokens[name]
        if name in self.scalars:
            tok = self.asm._frozen(self.scalars[name])
        elif name in self._lazy:
            value = self.get(name)
            tok = value if isinstance(value, (str, Record)) else freeze(value)
        else:
            tok = ("undefined", name)
        self.tokens[name] = tok
        return tok

    def key(self, deps: frozenset[str]) -> Any:
        if "*" in deps:
            return ("all", self.variant, self.state_key, self.fragment.name if self.fragment else None)
        names = self.asm._sorted_deps.get(deps)
        if names is None:
            names = self.asm._sorted_deps[deps] = tuple(sorted(deps))
        return tuple((name, self.token(name)) for name in names)

    def values(self, deps: frozenset[str]) -> dict[str, Any]:
        if "*" in deps:
            names = set(self.scalars) | self._lazy
        else:
            names = {n for n in deps if self.has(n)}
        return {n: self.get(n) for n in names}


def assemble(spec: Spec, variant: Variant) -> Request:
    return Assembler(spec).assemble(variant)


def assemble_all(spec: Spec, variants: Iterable[Variant] | None = None) -> list[Request]:
    asm = Assembler(spec)
    return [asm.assemble(v) for v in (matrix(spec) if variants is None else variants)]

