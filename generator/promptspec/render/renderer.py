"""Rendering untrusted spec templates: one `Renderer` per loaded spec.

Two engines exist because two kinds of text exist:

* ``jinja`` -- our own templates, full (sandboxed, see sandbox.py) Jinja.
* ``codex`` -- text taken verbatim from a Codex checkout, where the only markup
  is ``{{ name }}`` placeholders filled by plain string replacement, exactly as
  Codex does (codex.py).

Templates read files only through the spec's `SpecFS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import jinja2

from ..errors import SpecError
from ..spec.files import SpecFS, not_text
from ..spec.limits import Limits
from ..spec.model import Spec
from .codex import codex_join, fill_placeholders
from .sandbox import (
    _budget,
    _BudgetExceeded,
    _Env,
    _guarded_filters,
    _ps_call,
    _ps_check,
    _ps_iter,
    _ps_text,
    printable,
)

# ---------------------------------------------------------------------------
# The renderer


@dataclass
class Renderer:
    """Renders a spec's templates; one per loaded spec.

    Templates are compiled once and cached by file, so rendering the same
    fragment for 10,000 variants costs one parse.
    """

    fs: SpecFS
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        self.env = _Env(
            loader=jinja2.FunctionLoader(self._load),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=True,
            auto_reload=False,
            # No constant folding: Jinja's optimizer runs filters on literal
            # arguments at compile time, outside every budget, and bakes the
            # results into the code ('x'|center(2000000), 1,000 times, is 2 GB).
            optimized=False,
            finalize=printable,  # no reprs with memory addresses in the output (deterministic builds)
        )
        self.env.globals.clear()
        self.env.globals.update(
            range=self._range,
            text=self._text,
            codex_join=codex_join,
            __ps_iter=_ps_iter,
            __ps_check=_ps_check,
            __ps_call=_ps_call,
            __ps_text=_ps_text,
        )
        self.env.filters.update(_guarded_filters(self.env.filters))
        self._compiled: dict[tuple[str, str], jinja2.Template] = {}
        # Provenance of {% include %}/{% import %}: Jinja caches loaded
        # templates, so the file read happens once; `_load_template` runs on
        # every include, so each render that includes a file notes it.
        load_template = self.env._load_template

        def _noting_load_template(name: Any, globals: Any) -> jinja2.Template:
            template = load_template(name, globals)
            if self.fs.log.active and template.filename:
                path = Path(template.filename)
                self.fs.log.note(self.fs.source_ref(path, self.fs.read_text(str(name))[0]))
            return template

        self.env._load_template = _noting_load_template  # type: ignore[method-assign]
        self._codex_sources: dict[str, tuple[str, Path]] = {}

    # -- template globals -------------------------------------------------
    def _range(self, *args: int) -> range:
        r = range(*args)
        if len(r) > self.limits.max_items:
            raise _BudgetExceeded(f"range() of {len(r)} items is over the {self.limits.max_items} item limit")
        return r

    def _text(self, ref: str, **values: Any) -> str:
        """`text("@codex/path.md", network_access="enabled")`: a file's text with
        Codex-style placeholders filled, for composing verbatim upstream text."""
        text, path = self.fs.read_text(str(ref))
        return fill_placeholders(text, values, self.fs.display(path), self.limits.max_output_chars)

    def _load(self, name: str) -> tuple[str, str, Callable[[], bool]]:
        text, path = self.fs.read_text(name)
        return text, str(path), lambda: True

    # -- public -----------------------------------------------------------
    def compile_file(self, ref: str) -> jinja2.Template:
        key = ("file", ref)
        if key not in self._compiled:
            self._compiled[key] = self._compile(lambda: self.env.get_template(ref), ref)
        return self._compiled[key]

    def compile_string(self, source: str, where: str) -> jinja2.Template:
        key = (where, source)
        if key not in self._compiled:
            self._compiled[key] = self._compile(lambda: self.env.from_string(source), where)
        return self._compiled[key]

    def _compile(self, build: Callable[[], jinja2.Template], where: str) -> jinja2.Template:
        try:
            return build()
        except jinja2.TemplateSyntaxError as exc:
            raise SpecError(
                f"template syntax error: {exc.message}",
                self._shown(exc.filename or where),
                line=exc.lineno,
                hint="fix the Jinja syntax (see the spec format reference)",
            ) from None
        except RecursionError:
            raise SpecError("template nests too deeply", where) from None

    def render(self, template: jinja2.Template, context: Mapping[str, Any], where: str) -> str:
        _budget.start(self.limits, where)
        out: list[str] = []
        size = 0
        try:
            for chunk in template.generate(**context):
                size += len(chunk)
                if size > self.limits.max_output_chars:
                    raise _BudgetExceeded(
                        f"template output exceeds {self.limits.max_output_chars} characters"
                    )
                out.append(chunk)
                _budget.tick()
        except SpecError as exc:
            raise self._relocate(exc, where) from None
        except jinja2.UndefinedError as exc:
            name, line = self._error_location(where)
            raise SpecError(
                f"undefined template variable: {exc.message}",
                name,
                line=line,
                hint="define it in the scenario or the fragment's 'variables', or remove it",
            ) from None
        except jinja2.exceptions.SecurityError as exc:
            name, line = self._error_location(where)
            raise SpecError(
                f"template tried something the sandbox forbids: {exc}",
                name,
                line=line,
                hint="templates may use plain values, filters, range(), text() and codex_join() only",
            ) from None
        except _BudgetExceeded as exc:
            name, line = self._error_location(where)
            raise SpecError(str(exc), name, line=line, hint="templates must stay small and finite") from None
        except RecursionError:
            name, line = self._error_location(where)
            raise SpecError(
                "template recursion too deep (a circular include or a macro calling itself?)",
                name,
                line=line,
                hint="break the cycle",
            ) from None
        except jinja2.TemplateError as exc:
            name, line = self._error_location(where)
            raise SpecError(f"template error: {exc}", name, line=line) from None
        except (TypeError, ValueError, ArithmeticError, LookupError, AttributeError) as exc:
            name, line = self._error_location(where)
            raise SpecError(f"template error: {type(exc).__name__}: {exc}", name, line=line) from None
        text = "".join(out)
        found = not_text(text)
        if found is not None:  # made by a literal such as {{ "\x1b" }} or {{ "\ud800" }}
            raise SpecError(f"template output contains {found[0]}", self._shown(where), hint="prompt text must be plain LF-terminated text")
        return text

    def _relocate(self, exc: SpecError, where: str) -> SpecError:
        """A file error raised by `text()` or `{% include %}` is reported at
        the template line that asked for the file (a reference that escapes
        the spec, or a missing file); errors inside a file that was found keep
        their own location."""
        name, line = self._error_location(where)
        if line is None:
            return exc
        path = None if exc.path is None else Path(exc.path)
        if path is not None and not path.is_absolute():
            path = self.fs.root / path
        try:
            found = path is not None and path != self.fs.root and path.exists()
        except OSError:
            found = False
        if found:
            return exc
        message = exc.message
        if path is not None and path != self.fs.root:
            message = f"{message}: {self.fs.display(path)}"
        return SpecError(message, name, line=line, hint=exc.hint)

    def _shown(self, filename: str) -> str:
        p = Path(filename)
        return self.fs.display(p) if p.is_absolute() else filename

    def _error_location(self, where: str) -> tuple[str, int | None]:
        """Find the innermost template frame of the exception being handled."""
        import sys
        import traceback

        tb = sys.exc_info()[2]
        found: tuple[str, int | None] = (where, None)
        for frame, lineno in traceback.walk_tb(tb):
            dbg = frame.f_globals.get("__jinja_template__")
            if dbg is not None:
                line = dbg.get_corresponding_lineno(lineno)
                found = (self._shown(dbg.filename) if dbg.filename else where, line)
            elif "__jinja_exception__" in frame.f_globals:
                # Jinja rewrites template frames into fake ones whose code
                # carries the template's file name and line.
                filename = frame.f_code.co_filename
                named = filename not in ("<template>", "<unknown>")
                found = (self._shown(filename) if named else where, lineno)
        return found

    def render_file(self, ref: str, context: Mapping[str, Any]) -> str:
        return self.render(self.compile_file(ref), context, ref)

    def render_string(self, source: str, context: Mapping[str, Any], where: str) -> str:
        return self.render(self.compile_string(source, where), context, where)

    def render_codex(self, ref: str, context: Mapping[str, Any]) -> str:
        """Plain `{{ name }}` substitution, as Codex fills its own templates."""
        if ref not in self._codex_sources:
            self._codex_sources[ref] = self.fs.read_text(ref)
        text, path = self._codex_sources[ref]
        return fill_placeholders(text, context, self.fs.display(path), self.limits.max_output_chars)

    def variables_of(self, source: str) -> set[str]:
        """Undeclared variables a Jinja source refers to (for lint)."""
        from jinja2 import meta

        return set(meta.find_undeclared_variables(self.env.parse(source))) - {"__ps_iter", "__ps_check", "__ps_call", "__ps_text"}



def renderer_for(spec: Spec) -> Renderer:
    """The one renderer of a loaded spec, made on first use.

    Compiled templates are cached inside it, so every stage that renders or
    inspects the spec's templates (assembly, lint, the incremental session)
    shares one parse per file."""
    renderer = spec.memo.get("renderer")
    if renderer is None:
        renderer = spec.memo["renderer"] = Renderer(spec.fs, spec.limits)
    return renderer
