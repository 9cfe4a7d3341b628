"""Rendering untrusted spec templates.

Spec files arrive in pull requests from anyone, so a template is treated as
hostile: it renders in Jinja2's `ImmutableSandboxedEnvironment` (no mutating
a list or dict the spec passed in) with `StrictUndefined`,
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

import functools
import os
import re
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import jinja2
from jinja2 import nodes
from jinja2.lexer import Token, TokenStream
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import _PassArg
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
    max_items: int = 100_000


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
        parts = [part for part in posix.split("/") if part]
        if any(len(part.encode("utf-8", "surrogatepass")) > 255 for part in parts) or len(posix) > 4096:
            raise SpecError(f"file reference {ref[:80]!r}... is too long", where, hint="use a shorter path")
        if base != self.root and any(part.startswith(".") for part in parts):
            raise SpecError(
                f"{ref!r} names a hidden file or folder under a root",
                where,
                hint="spec files may not read hidden files (such as .git/) of a declared root",
            )
        candidate = base / posix
        try:
            real = candidate.resolve()
        except RuntimeError:  # pathlib's "Symlink loop from ..."
            raise SpecError(f"cannot resolve {ref!r}: a symlink loop", where, hint="replace the symlink by a real file") from None
        except OSError as exc:
            raise SpecError(f"cannot resolve {ref!r}: {exc.strerror or exc}", where) from None
        if real != base and base not in real.parents:
            raise SpecError(
                f"{ref!r} is a symlink pointing outside the spec folder",
                where,
                hint="replace the symlink by a real file",
            )
        return candidate

    def read_text(self, ref: str, *, origin: str | Path | None = None) -> tuple[str, Path]:
        path = self.resolve(ref, origin=origin)
        try:
            return read_text_file(path, cache=self._cache, seen=self.read_paths), path
        except SpecError as exc:
            if exc.path == path:  # name the file as the spec does, not by its absolute path
                raise SpecError(exc.message, self.display(path), line=exc.line, column=exc.column, hint=exc.hint) from None
            raise

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
        # Open first, then check what was opened: a FIFO or device (or a
        # /proc file that reports size 0) must not be read without a bound.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb", buffering=0) as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise SpecError("is not a regular file", path, hint="spec files must be plain text files")
            if st.st_size > MAX_FILE_BYTES:
                raise SpecError(
                    f"file is {st.st_size} bytes, over the {MAX_FILE_BYTES} byte limit",
                    path,
                    hint="prompt texts this large are almost certainly a mistake",
                )
            data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise SpecError(
                f"file is over the {MAX_FILE_BYTES} byte limit",
                path,
                hint="prompt texts this large are almost certainly a mistake",
            )
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
#
# The invariant: every value a template can hold is *small when written out*
# (its `_weight`, the characters and items it would print as, stays within
# `max_output_chars` and its lists within `max_items`), and every step that
# could take long spends from an iteration budget.  Values are checked where
# they are made: operators project their result size before computing it
# (`'x' * 10**10` never allocates), filters and calls that could amplify are
# replaced or checked, and container literals are weighed with sharing counted
# in full, so `[a, a]` nested 60 deep is refused long before `|string` tries to
# print 2**60 items.  Templates cannot mutate values (immutable sandbox) and
# have no `namespace`, so nothing grows across loop turns behind our back.

MAX_INT_BITS = 14_000
"""Largest integer a template may compute (about 4,200 digits, what Python
will still print): bigger ones make `*` and `**` arbitrarily slow."""

MAX_TEMPLATE_TOKENS = 50_000
"""Jinja compiles a template to Python code; 50,000 tags compile in a fraction
of a second, while a million would take minutes (a real template has ~100)."""

MAX_SLOW_FILTER_CHARS = 100_000
"""Input limit of the filters that cost microseconds per character
(`wordwrap`, `urlize`)."""

BYTES_PER_STEP = 4096
"""Building a value costs one step of the iteration budget per 4 KB, so a
template cannot spend minutes making (and dropping) 2 MB strings."""

RECURSIVE_TURN_COST = 4
"""Iteration budget per turn of a `recursive` loop (each level is a call)."""

CALL_COST = 25
"""Iteration budget spent per call: a macro call costs as much as dozens of
loop turns, so runaway recursion stops about as fast as runaway loops (and
40,000 calls in one template is still far beyond any real prompt)."""


class _Budget(threading.local):
    """Per-thread budget of the render in progress (MkDocs serve renders off the
    main thread, so no signals; instead hooks below spend from this budget)."""

    limits: Limits = Limits()
    iterations: int = 0
    next_check: int = 1024
    deadline: float = float("inf")
    source: str | None = None

    def start(self, limits: Limits, source: str) -> None:
        self.limits = limits
        self.iterations = 0
        self.next_check = 1024
        self.deadline = time.monotonic() + limits.max_seconds
        self.source = source

    def tick(self, n: int = 1) -> None:
        self.iterations += n
        if self.iterations > self.limits.max_iterations:
            raise _BudgetExceeded(
                f"template does more than {self.limits.max_iterations} steps of work (loop turns, calls, list items)"
            )
        if self.iterations >= self.next_check:
            self.next_check = self.iterations + 1024
            if time.monotonic() > self.deadline:
                raise _BudgetExceeded(f"template took longer than {self.limits.max_seconds:g} s")

    def check_size(self, value: Any) -> Any:
        size = _weight(value, self.limits)
        if size >= BYTES_PER_STEP:
            self.tick(size // BYTES_PER_STEP)  # building big values is work too
        return value


class _BudgetExceeded(Exception):
    pass


_budget = _Budget()


def _weight(value: Any, limits: Limits | None = None) -> int:
    """How many characters and items `value` would take written out in full.

    A shared sub-list counts every time it appears (that is what `|string`
    or `|tojson` would print), computed once per object so a deeply shared
    structure is weighed in linear time.  Raises `_BudgetExceeded` as soon as
    the weight passes the limit or a list is longer than `max_items`.
    """
    limits = limits or _budget.limits
    cap = limits.max_output_chars
    if isinstance(value, (str, bytes, bytearray)):  # the common case, without the walk
        if len(value) > cap:
            raise _BudgetExceeded(f"template builds a value of {len(value)} characters, over the {cap} limit")
        return len(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value.bit_length() // 3 + 1 if isinstance(value, int) and not isinstance(value, bool) else 1
    memo: dict[int, tuple[Any, int]] = {}
    active: set[int] = set()

    def w(v: Any) -> int:
        if isinstance(v, (str, bytes, bytearray)):
            return len(v)
        if v is None or isinstance(v, (bool, float)):
            return 1
        if isinstance(v, int):
            return v.bit_length() // 3 + 1
        if isinstance(v, range):
            return len(v) + 1
        if not isinstance(v, (list, tuple, set, frozenset, dict, Mapping)):
            return 1
        key = id(v)
        if key in memo:
            return memo[key][1]
        if key in active:
            raise _BudgetExceeded("template value contains itself")
        n = len(v)
        if n > limits.max_items:
            raise _BudgetExceeded(f"template builds a list of {n} items, over the {limits.max_items} limit")
        _budget.tick(n // 8 + 1)
        active.add(key)
        total = 1
        if isinstance(v, Mapping):
            for k in v:
                total += w(k) + w(v[k])
                if total > cap:
                    break
        else:
            for item in v:
                total += w(item)
                if total > cap:
                    break
        active.discard(key)
        if total > cap:
            raise _BudgetExceeded(f"template builds a value of more than {cap} characters")
        memo[key] = (v, total)
        return total

    total = w(value)
    if total > cap:
        raise _BudgetExceeded(f"template builds a value of {total} characters, over the {cap} limit")
    return total


def _limited(iterable: Iterable[Any], what: str) -> Iterator[Any]:
    """Pass items through while they stay within the item and size budgets:
    what a filter's lazy output may yield before it is ever made into a list."""
    limits = _budget.limits
    count = 0
    size = 0
    for item in iterable:
        count += 1
        if count > limits.max_items:
            raise _BudgetExceeded(f"'{what}' produces more than {limits.max_items} items")
        size += _weight(item, limits)
        if size > limits.max_output_chars:
            raise _BudgetExceeded(f"'{what}' produces more than {limits.max_output_chars} characters")
        _budget.tick()
        yield item


def _ps_iter(iterable: Iterable[Any], cost: int = 1) -> Iterator[Any]:
    for item in iterable:
        _budget.tick(cost)
        yield item


def _ps_check(value: Any) -> Any:
    _budget.tick()
    return _budget.check_size(value)


def _ps_call(value: Any) -> Any:
    _budget.tick(CALL_COST)
    return _budget.check_size(value)


class _Guard(NodeTransformer):
    """Rewrite the template tree so loops and value-building expressions spend
    from the budget.  Jinja offers no hook for iteration, so we add one."""

    def __init__(self) -> None:
        self.recursive_loops = 0

    @staticmethod
    def _call(helper: str, node: nodes.Expr, *extra: Any) -> nodes.Call:
        args = [node, *(nodes.Const(x, lineno=node.lineno) for x in extra)]
        return nodes.Call(nodes.Name(helper, "load"), args, [], None, None, lineno=node.lineno)

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.recursive_loops += bool(node.recursive)
        self.generic_visit(node)
        self.recursive_loops -= bool(node.recursive)
        # A turn of a recursive loop costs a few plain ones (a call per level).
        node.iter = self._call("__ps_iter", node.iter, RECURSIVE_TURN_COST) if node.recursive else self._call("__ps_iter", node.iter)
        return node

    def _wrap(self, node: nodes.Expr) -> nodes.Node:
        self.generic_visit(node)
        return self._call("__ps_check", node)

    def visit_Call(self, node: nodes.Call) -> nodes.Node:
        self.generic_visit(node)
        if self.recursive_loops and isinstance(node.node, nodes.Name) and node.node.name == "loop" and node.args:
            # `loop(items)` in a recursive for: its items count as loop turns too.
            node.args[0] = self._call("__ps_iter", node.args[0], RECURSIVE_TURN_COST)
        return self._call("__ps_call", node)

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        if node.ctx != "load":  # an assignment target such as `{% for a, b in x %}`
            return self.generic_visit(node)
        return self._wrap(node)

    # `{% call %}` and `{% filter %}` blocks need their Call/Filter node as is;
    # their arguments are still guarded.
    def visit_CallBlock(self, node: nodes.CallBlock) -> nodes.Node:
        call = node.call
        call.args = [self.visit(a) for a in call.args]
        call.kwargs = [self.visit(k) for k in call.kwargs]
        if call.dyn_args is not None:
            call.dyn_args = self.visit(call.dyn_args)
        if call.dyn_kwargs is not None:
            call.dyn_kwargs = self.visit(call.dyn_kwargs)
        node.body = [self.visit(n) for n in node.body]
        node.args = [self.visit(a) for a in node.args]
        node.defaults = [self.visit(d) for d in node.defaults]
        return node

    def visit_FilterBlock(self, node: nodes.FilterBlock) -> nodes.Node:
        flt = node.filter
        while flt is not None:
            flt.args = [self.visit(a) for a in flt.args]
            flt.kwargs = [self.visit(k) for k in flt.kwargs]
            flt = flt.node if isinstance(flt.node, nodes.Filter) else None
        node.body = [self.visit(n) for n in node.body]
        return node

    visit_Concat = _wrap
    visit_Filter = _wrap
    visit_Add = _wrap
    visit_List = _wrap
    visit_Dict = _wrap


def _projected(n: int, what: str) -> None:
    if n > _budget.limits.max_output_chars:
        raise _BudgetExceeded(f"{what} would build {n} characters, over the {_budget.limits.max_output_chars} limit")


_FORMAT_SPEC = re.compile(rb"%(?:\([^)]*\))?[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")


def _check_percent_format(fmt: str | bytes, args: Any) -> None:
    """`'%*d' % (10**9, 1)` allocates a gigabyte before anything can look at
    the result, so widths are checked first and the result size projected."""
    data = fmt.encode("utf-8", "surrogatepass") if isinstance(fmt, str) else bytes(fmt)
    widest = 0
    specs = 0
    for m in _FORMAT_SPEC.finditer(data):
        specs += 1
        for part in m.groups():
            if part == b"*":
                raise _BudgetExceeded("'*' widths are not allowed in % formatting in templates")
            if part is not None:
                if len(part) > 6 or int(part) > 100_000:
                    raise _BudgetExceeded("format width too large in template")
                widest = max(widest, int(part))
    # repr() of an argument is at most ~10 characters per character or item.
    _projected(len(fmt) + specs * widest + 10 * _weight(args), "% formatting")


class _Env(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def _tokenize(self, source: str, name: str | None, filename: str | None = None, state: str | None = None) -> TokenStream:
        stream = super()._tokenize(source, name, filename, state)

        def counted() -> Iterator[Token]:
            n = 0
            for token in stream:
                if token.type != "data":
                    n += 1
                    if n > MAX_TEMPLATE_TOKENS:
                        raise jinja2.TemplateSyntaxError(
                            f"template has more than {MAX_TEMPLATE_TOKENS} tags and expressions; split it into smaller files",
                            token.lineno,
                            name,
                            filename,
                        )
                yield token

        return TokenStream(counted(), name, filename)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        try:
            tree = super()._parse(source, name, filename)
            return _Guard().visit(tree)
        except RecursionError:
            # Jinja's parser recurses per nesting level; report it as the
            # syntax problem it is, to every caller (render, lint, assemble).
            raise jinja2.TemplateSyntaxError(
                "template nests too deeply (thousands of brackets or blocks)", 1, name, filename
            ) from None

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _budget.tick()
        both_ints = isinstance(left, int) and isinstance(right, int)
        if operator == "*":
            if both_ints:
                if left.bit_length() + right.bit_length() > MAX_INT_BITS:
                    raise _BudgetExceeded(f"template multiplies numbers over {MAX_INT_BITS} bits")
            else:
                for seq, n in ((left, right), (right, left)):
                    if isinstance(seq, (str, bytes, bytearray, list, tuple)) and isinstance(n, int):
                        _projected(_weight(seq) * n if isinstance(seq, (list, tuple)) else len(seq) * n, "repetition")
                        if isinstance(seq, (list, tuple)):
                            items = len(seq) * max(n, 0)
                            if items > _budget.limits.max_items:
                                raise _BudgetExceeded(f"repetition would build a list of {items} items, over the {_budget.limits.max_items} limit")
        elif operator == "**":
            if both_ints and right > 0 and abs(left) > 1 and left.bit_length() * right > MAX_INT_BITS:
                raise _BudgetExceeded(f"template computes a number over {MAX_INT_BITS} bits (exponent too large)")
        elif operator == "%" and isinstance(left, (str, bytes, bytearray)):
            _check_percent_format(left, right)
        elif operator == "+":
            if both_ints:
                pass
            elif isinstance(left, (str, bytes, bytearray)) and isinstance(right, type(left)):
                _projected(len(left) + len(right), "concatenation")
            elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
                _projected(_weight(left) + _weight(right), "concatenation")
        result = super().call_binop(context, operator, left, right)
        if isinstance(result, (str, bytes, list, tuple)) and len(result) >= BYTES_PER_STEP:
            _budget.tick(len(result) // BYTES_PER_STEP)
        return result

    def wrap_str_format(self, value: Any) -> None:
        # Jinja hands out a sandboxed `str.format` before asking
        # is_safe_attribute; its width fields still build gigabytes
        # ('{0:>999999999}'), so format stays refused like the other
        # amplifying methods.
        return None

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        # Methods that can amplify a small input into a huge value in one call.
        if isinstance(obj, (str, bytes, bytearray)) and attr in _AMPLIFYING_STR_METHODS:
            return False
        if attr in _UNSAFE_ANY_METHODS:
            return False
        return super().is_safe_attribute(obj, attr, value)


_AMPLIFYING_STR_METHODS = frozenset(
    {"format", "format_map", "center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join", "translate", "maketrans"}
)
_UNSAFE_ANY_METHODS = frozenset({"to_bytes", "from_bytes", "encode"})


def _safe_join(environment: Any, value: Iterable[Any], d: str = "", attribute: Any = None) -> str:
    if attribute is not None:
        value = map(jinja2.filters.make_attrgetter(environment, attribute), value)
    items = []
    size = 0
    d = str(d)
    for v in value:
        s = str(v)
        size += len(s) + len(d)
        _projected(size, "join")
        items.append(s)
        _budget.tick()
    return d.join(items)


_safe_join.jinja_pass_arg = _PassArg.environment  # type: ignore[attr-defined]


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


def _safe_sum(environment: Any, iterable: Iterable[Any], attribute: Any = None, start: Any = 0) -> Any:
    """`sum` of lists copies the running total at every step (quadratic);
    each step is charged by the size of what it copies."""
    if attribute is not None:
        iterable = map(jinja2.filters.make_attrgetter(environment, attribute), iterable)
    total = start
    size = _weight(start)
    for item in iterable:
        if isinstance(total, (list, tuple, str)):
            size += _weight(item)
            _projected(size, "sum")
            _budget.tick(len(total) // 8 + 1)  # each step copies the running total
        total = total + item
        _budget.tick()
    return total


_safe_sum.jinja_pass_arg = _PassArg.environment  # type: ignore[attr-defined]


def _limit_arg(func: Callable[..., Any], name: str, position: int, what: str) -> Callable[..., Any]:
    """Refuse a count argument (`batch(10**9, 'x')`, `slice(10**9)`) that
    would make a filter build that many items."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value = kwargs.get(name, args[position] if len(args) > position else None)
        if isinstance(value, int) and value > _budget.limits.max_items:
            raise _BudgetExceeded(f"{what}({value}) is over the {_budget.limits.max_items} item limit")
        return func(*args, **kwargs)

    return wrapper


def _limit_output(func: Callable[..., Any], what: str) -> Callable[..., Any]:
    """A lazy filter (map, select, batch...): its items spend from the budget
    as they are produced, whoever consumes them."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _limited(func(*args, **kwargs), what)

    return wrapper


def _limit_text(func: Callable[..., Any], what: str) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        offset = 0 if _PassArg.from_obj(func) is None else 1
        s = args[offset] if len(args) > offset else ""
        if isinstance(s, str) and len(s) > MAX_SLOW_FILTER_CHARS:
            raise _BudgetExceeded(f"'{what}' input is {len(s)} characters, over the {MAX_SLOW_FILTER_CHARS} limit")
        return func(*args, **kwargs)

    return wrapper


def _forbidden(name: str, why: str) -> Callable[..., Any]:
    def refuse(*_args: Any, **_kw: Any) -> Any:
        raise _BudgetExceeded(f"the '{name}' filter is not available in spec templates; {why}")

    return refuse


def _forbidden_format(*_args: Any, **_kw: Any) -> str:
    raise _BudgetExceeded("the 'format' filter is not available in spec templates; use ~ to join text")


def _guarded_filters(base: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """Jinja's filters with the amplifying ones replaced or limited."""
    out: dict[str, Callable[..., Any]] = {
        "join": _safe_join,
        "replace": _safe_replace,
        "center": _safe_center,
        "indent": _safe_indent,
        "sum": _safe_sum,
        "format": _forbidden_format,
        "random": _forbidden("random", "output must be the same on every run"),
    }
    for name in ("map", "select", "reject", "selectattr", "rejectattr", "items"):
        out[name] = _limit_output(base[name], name)
    out["batch"] = _limit_output(_limit_arg(base["batch"], "linecount", 1, "batch"), "batch")
    out["slice"] = _limit_output(_limit_arg(base["slice"], "slices", 2, "slice"), "slice")
    for name in ("wordwrap", "urlize"):
        out[name] = _limit_text(base[name], name)
    return out


def codex_join(*parts: Any) -> str:
    """Join text blocks the way Codex composes its permissions section: before
    each non-empty block add a newline unless the text so far already ends with
    one (so the result starts with one), and end with a newline."""
    out = ""
    for part in parts:
        part = "" if part is None else str(part)
        if not part:
            continue
        _projected(len(out) + len(part) + 2, "codex_join")
        if not out.endswith("\n"):
            out += "\n"
        out += part
    if out and not out.endswith("\n"):
        out += "\n"
    return out


def _codex_placeholders(text: str, values: Mapping[str, Any], where: str | Path, limit: int | None = None) -> str:
    """Fill `{{ name }}` placeholders; refuses to grow the text past `limit`
    characters (a file of 100,000 placeholders times a long value would)."""
    cap = max(Limits.max_output_chars if limit is None else limit, len(text))
    size = len(text)

    def sub(m: re.Match[str]) -> str:
        nonlocal size
        name = m.group(1)
        if name not in values:
            line = text[: m.start()].count("\n") + 1
            raise SpecError(
                f"placeholder '{{{{ {name} }}}}' has no value",
                where,
                line=line,
                hint=f"pass {name}=... or define '{name}' in the scenario",
            )
        value = str(values[name])
        size += len(value) - (m.end() - m.start())
        if size > cap:
            raise SpecError(
                f"placeholders expand the text to more than {cap} characters",
                where,
                line=text[: m.start()].count("\n") + 1,
                hint="prompt texts must stay small; check the placeholder values",
            )
        return value

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
            # No constant folding: Jinja's optimizer runs filters on literal
            # arguments at compile time, outside every budget, and bakes the
            # results into the code ('x'|center(2000000), 1,000 times, is 2 GB).
            optimized=False,
        )
        self.env.globals.clear()
        self.env.globals.update(
            range=self._range,
            text=self._text,
            codex_join=codex_join,
            __ps_iter=_ps_iter,
            __ps_check=_ps_check,
            __ps_call=_ps_call,
        )
        self.env.filters.update(_guarded_filters(self.env.filters))
        self._compiled: dict[tuple[str, str], jinja2.Template] = {}
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
        return _codex_placeholders(text, values, self.fs.display(path), self.limits.max_output_chars)

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
        except jinja2.sandbox.SecurityError as exc:
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
        return "".join(out)

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
        return _codex_placeholders(text, context, self.fs.display(path), self.limits.max_output_chars)

    def variables_of(self, source: str) -> set[str]:
        """Undeclared variables a Jinja source refers to (for lint)."""
        from jinja2 import meta

        return set(meta.find_undeclared_variables(self.env.parse(source))) - {"__ps_iter", "__ps_check", "__ps_call"}

