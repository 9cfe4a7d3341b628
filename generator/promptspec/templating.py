"""Rendering untrusted spec templates.

Spec files arrive in pull requests from anyone, so a template is treated as
hostile: it renders in Jinja2's `SandboxedEnvironment` with `StrictUndefined`,
sees only the values we pass in (no environment variables, no globals beyond a
few pure helpers), reads files only through `SpecFS` (confined to the spec
folder and the roots its `spec.yaml` names), and is held to budgets on output
size, loop iterations and wall time, so a template that tries to expand to
gigabytes or spin forever stops with a clear `SpecError` instead.

Two engines exist because two kinds of text exist:

* ``jinja`` — our own templates, full (sandboxed) Jinja.
* ``codex`` — text taken verbatim from a Codex checkout, where the only markup
  is ``{{ name }}`` placeholders filled by plain string replacement, exactly as
  Codex does.  Running such text through Jinja would misread any stray ``{%``.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import jinja2
from jinja2 import nodes
from jinja2.sandbox import SandboxedEnvironment
from jinja2.visitor import NodeTransformer

from .errors import SpecError

MAX_FILE_BYTES = 8 * 1024 * 1024
"""Largest spec file we read: a prompt text bigger than this is a mistake."""

CODEX_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class Limits:
    """Budgets for one render.  Generous for real prompts (Codex's biggest
    template is ~25 KB), small enough that hostile ones fail in well under a
    second and a few MB of memory."""

    max_output_chars: int = 2 * 1024 * 1024
    max_iterations: int = 1_000_000
    max_seconds: float = 5.0


# ---------------------------------------------------------------------------
# Files


class SpecFS:
    """Read-only access to the spec folder and its declared extra roots.

    A reference is either a path relative to the spec folder, or
    ``@root/path`` for a root declared in ``spec.yaml`` (used by specs imported
    from a Codex checkout, which refer to the checkout instead of copying it).
    Absolute paths, ``..`` and symlinks leading outside the root are refused:
    the spec must not be able to publish ``/etc/passwd`` on a website.
    """

    def __init__(self, root: Path, roots: Mapping[str, Path] | None = None):
        self.root = root.resolve()
        self.roots = {name: p.resolve() for name, p in (roots or {}).items()}
        self._cache: dict[Path, str] = {}
        self.read_paths: set[Path] = set()

    def resolve(self, ref: str, *, origin: str | Path | None = None) -> Path:
        where = origin if origin is not None else self.root
        if not isinstance(ref, str) or not ref.strip():
            raise SpecError("empty file reference", where, hint="name a file inside the spec folder")
        if "\x00" in ref:
            raise SpecError("file reference contains a NUL byte", where)
        base = self.root
        rel = ref
        if ref.startswith("@"):
            name, _, rel = ref[1:].partition("/")
            if name not in self.roots:
                known = ", ".join(sorted(self.roots)) or "none declared"
                raise SpecError(
                    f"unknown root '@{name}' in file reference {ref!r}",
                    where,
                    hint=f"declare it under 'roots:' in spec.yaml (known: {known})",
                )
            base = self.roots[name]
        posix = rel.replace("\\", "/")
        if posix.startswith("/") or re.match(r"^[A-Za-z]:", posix):
            raise SpecError(
                f"absolute path {ref!r} is not allowed",
                where,
                hint="use a path relative to the spec folder",
            )
        if any(part == ".." for part in posix.split("/")):
            raise SpecError(
                f"path {ref!r} leaves the spec folder",
                where,
                hint="spec files may only refer to files inside the spec folder",
            )
        candidate = base / posix
        real = candidate.resolve()
        if real != base and base not in real.parents:
            raise SpecError(
                f"{ref!r} is a symlink pointing outside the spec folder",
                where,
                hint="replace the symlink by a real file",
            )
        return candidate

    def read_text(self, ref: str, *, origin: str | Path | None = None) -> tuple[str, Path]:
        path = self.resolve(ref, origin=origin)
        return read_text_file(path, cache=self._cache, seen=self.read_paths), path

    def display(self, path: Path) -> str:
        """A stable, machine-independent name for a file (for pages and locks)."""
        real = path.resolve()
        if real == self.root or self.root in real.parents:
            return real.relative_to(self.root).as_posix()
        for name, base in sorted(self.roots.items()):
            if real == base or base in real.parents:
                return f"@{name}/{real.relative_to(base).as_posix()}"
        return path.as_posix()


def read_text_file(path: Path, *, cache: dict[Path, str] | None = None, seen: set[Path] | None = None) -> str:
    """Read a spec text file strictly: UTF-8, no BOM, no NULs, LF line endings.

    Prompt text goes to the model byte for byte, so a stray BOM or a CRLF from a
    Windows checkout would silently change every request; we refuse them.
    """
    if cache is not None and path in cache:
        return cache[path]
    try:
        if path.is_dir():
            raise SpecError("is a directory, expected a file", path)
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SpecError(
                f"file is {size} bytes, over the {MAX_FILE_BYTES} byte limit",
                path,
                hint="prompt texts this large are almost certainly a mistake",
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise SpecError("file not found", path, hint="create it or fix the reference") from None
    except PermissionError:
        raise SpecError("file is not readable", path, hint="check its permissions") from None
    except OSError as exc:
        raise SpecError(f"cannot read file: {exc.strerror or exc}", path) from None
    if b"\x00" in data:
        raise SpecError("looks like a binary file (contains NUL bytes)", path, hint="spec files must be UTF-8 text")
    if data.startswith(b"\xef\xbb\xbf"):
        raise SpecError("file starts with a UTF-8 byte-order mark", path, line=1, hint="save it as UTF-8 without BOM")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecError(f"not valid UTF-8 (byte {exc.start})", path, line=line, hint="save the file as UTF-8") from None
    if "\r" in text:
        line = text[: text.index("\r")].count("\n") + 1
        raise SpecError(
            "file has CR (Windows) line endings",
            path,
            line=line,
            hint="convert it to LF line endings, e.g. with dos2unix",
        )
    if cache is not None:
        cache[path] = text
    if seen is not None:
        seen.add(path.resolve())
    return text


# ---------------------------------------------------------------------------
# Budgets


class _Budget(threading.local):
    """Per-thread budget of the render in progress (MkDocs serve renders off the
    main thread, so no signals; instead hooks below spend from this budget)."""

    limits: Limits = Limits()
    iterations: int = 0
    deadline: float = 0.0
    source: str | None = None

    def start(self, limits: Limits, source: str) -> None:
        self.limits = limits
        self.iterations = 0
        self.deadline = time.monotonic() + limits.max_seconds
        self.source = source

    def tick(self, n: int = 1) -> None:
        self.iterations += n
        if self.iterations > self.limits.max_iterations:
            raise _BudgetExceeded(f"template loops more than {self.limits.max_iterations} times")
        if self.iterations % 1024 == 0 and time.monotonic() > self.deadline:
            raise _BudgetExceeded(f"template took longer than {self.limits.max_seconds:g} s")

    def check_size(self, value: Any) -> Any:
        if isinstance(value, (str, list, tuple, bytes)) and len(value) > self.limits.max_output_chars:
            raise _BudgetExceeded(
                f"template builds a value of {len(value)} items, over the {self.limits.max_output_chars} limit"
            )
        return value


class _BudgetExceeded(Exception):
    pass


_budget = _Budget()


def _ps_iter(iterable: Iterable[Any]) -> Iterator[Any]:
    for item in iterable:
        _budget.tick()
        yield item


def _ps_check(value: Any) -> Any:
    _budget.tick()
    return _budget.check_size(value)


class _Guard(NodeTransformer):
    """Rewrite the template tree so loops and value-building expressions spend
    from the budget.  Jinja offers no hook for iteration, so we add one."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Call(nodes.Name("__ps_iter", "load"), [node.iter], [], None, None, lineno=node.lineno)
        return node

    def _wrap(self, node: nodes.Expr) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Call(nodes.Name("__ps_check", "load"), [node], [], None, None, lineno=node.lineno)

    visit_Concat = _wrap
    visit_Filter = _wrap
    visit_Call = _wrap
    visit_Add = _wrap


def _projected(n: int, what: str) -> None:
    if n > _budget.limits.max_output_chars:
        raise _BudgetExceeded(f"{what} would build {n} characters, over the {_budget.limits.max_output_chars} limit")


class _Env(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        return _Guard().visit(tree)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _budget.tick()
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int):
                    _projected(len(seq) * n, "repetition")
        elif operator == "**":
            if isinstance(right, (int, float)) and abs(right) > 512:
                raise _BudgetExceeded("exponent too large in template")
        elif operator == "%" and isinstance(left, str):
            if re.search(r"%[-+ #0]*\d{6,}", left) or re.search(r"\.\d{6,}", left):
                raise _BudgetExceeded("format width too large in template")
        elif operator == "+":
            if isinstance(left, (str, list, tuple)) and isinstance(right, type(left)):
                _projected(len(left) + len(right), "concatenation")
        return super().call_binop(context, operator, left, right)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        # Methods that can amplify a small input into a huge string in one call.
        if isinstance(obj, str) and attr in _AMPLIFYING_STR_METHODS:
            return False
        return super().is_safe_attribute(obj, attr, value)


_AMPLIFYING_STR_METHODS = frozenset(
    {"format", "format_map", "center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join"}
)


def _safe_join(value: Iterable[Any], d: str = "", attribute: Any = None) -> str:
    items = [str(v) for v in value]
    _projected(sum(map(len, items)) + len(d) * max(len(items) - 1, 0), "join")
    return d.join(items)


def _safe_replace(s: str, old: str, new: str, count: int | None = None) -> str:
    s, old, new = str(s), str(old), str(new)
    hits = (len(s) + 1) if old == "" else s.count(old)
    if count is not None and count >= 0:
        hits = min(hits, count)
    _projected(len(s) + hits * max(len(new) - len(old), 0), "replace")
    return s.replace(old, new) if count is None else s.replace(old, new, count)


def _safe_center(s: str, width: int = 80) -> str:
    _projected(int(width), "center")
    return str(s).center(width)


def _safe_indent(s: str, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    pad = width if isinstance(width, str) else " " * int(width) if int(width) < 10_000 else None
    if pad is None:
        raise _BudgetExceeded("indent width too large in template")
    s = str(s)
    _projected(len(s) + len(pad) * (s.count("\n") + 1), "indent")
    return jinja2.filters.do_indent(s, width, first, blank)


def _forbidden_format(*_args: Any, **_kw: Any) -> str:
    raise _BudgetExceeded("the 'format' filter is not available in spec templates; use ~ to join text")


def codex_join(*parts: Any) -> str:
    """Join text blocks the way Codex composes its permissions section: before
    each non-empty block add a newline unless the text so far already ends with
    one (so the result starts with one), and end with a newline."""
    out = ""
    for part in parts:
        part = "" if part is None else str(part)
        if not part:
            continue
        if not out.endswith("\n"):
            out += "\n"
        out += part
    if out and not out.endswith("\n"):
        out += "\n"
    _projected(len(out), "codex_join")
    return out


def _codex_placeholders(text: str, values: Mapping[str, Any], where: str | Path) -> str:
    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in values:
            line = text[: m.start()].count("\n") + 1
            raise SpecError(
                f"placeholder '{{{{ {name} }}}}' has no value",
                where,
                line=line,
                hint=f"pass {name}=... or define '{name}' in the scenario",
            )
        return str(values[name])

    return CODEX_PLACEHOLDER.sub(sub, text)


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
        )
        self.env.globals.clear()
        self.env.globals.update(
            range=self._range,
            text=self._text,
            codex_join=codex_join,
            __ps_iter=_ps_iter,
            __ps_check=_ps_check,
        )
        self.env.filters.update(
            join=_safe_join,
            replace=_safe_replace,
            center=_safe_center,
            indent=_safe_indent,
            format=_forbidden_format,
        )
        self._compiled: dict[tuple[str, str], jinja2.Template] = {}
        self._codex_sources: dict[str, tuple[str, Path]] = {}

    # -- template globals -------------------------------------------------
    @staticmethod
    def _range(*args: int) -> range:
        r = range(*args)
        if len(r) > 100_000:
            raise _BudgetExceeded("range() too large in template")
        return r

    def _text(self, ref: str, **values: Any) -> str:
        """`text("@codex/path.md", network_access="enabled")`: a file's text with
        Codex-style placeholders filled, for composing verbatim upstream text."""
        text, path = self.fs.read_text(str(ref))
        return _codex_placeholders(text, values, self.fs.display(path))

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
        except SpecError:
            raise
        except jinja2.UndefinedError as exc:
            name, line = self._error_location(where)
            raise SpecError(
                f"undefined template variable: {exc.message}",
                name,
                line=line,
                hint="define it in the scenario or the fragment's 'variables', or remove it",
            ) from None
        except jinja2.sandbox.SecurityError as exc:
            name, line = self._error_location(where)
            raise SpecError(f"template tried something the sandbox forbids: {exc}", name, line=line) from None
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
        return "".join(out)

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
                name = dbg.filename or where
                line = dbg.get_corresponding_lineno(lineno)
                found = (self._shown(name) if dbg.filename else where, line)
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
        return _codex_placeholders(text, context, self.fs.display(path))

    def variables_of(self, source: str) -> set[str]:
        """Undeclared variables a Jinja source refers to (for lint)."""
        from jinja2 import meta

        return set(meta.find_undeclared_variables(self.env.parse(source))) - {"__ps_iter", "__ps_check"}

