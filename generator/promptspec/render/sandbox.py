"""The Jinja sandbox: budgets that hold for hostile templates.

A template from a pull request renders in Jinja2's `ImmutableSandboxedEnvironment`
with `StrictUndefined`, sees only the values we pass in, and is held to budgets
on output size, loop iterations and wall time, so a template that tries to
expand to gigabytes or spin forever stops with a clear `SpecError` instead.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from typing import Any, Callable, Iterable, Iterator, Mapping, cast

import jinja2
from jinja2 import nodes
from jinja2.lexer import Token, TokenStream
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import _PassArg
from jinja2.visitor import NodeTransformer

from ..spec.limits import Limits

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
    deadline: float = float("inf")  # in the thread's CPU time (time.thread_time)
    source: str | None = None

    def start(self, limits: Limits, source: str) -> None:
        self.limits = limits
        self.iterations = 0
        self.next_check = 1024
        # CPU time of this thread, not the clock: a render waits for nothing
        # (no I/O but bounded includes), so what it costs is its CPU, and a busy
        # machine (a CI runner, a test run beside a sweep) must not turn a
        # template that is within its step budget into a failed build.
        self.deadline = time.thread_time() + limits.max_seconds
        self.source = source

    def tick(self, n: int = 1) -> None:
        self.iterations += n
        if self.iterations > self.limits.max_iterations:
            raise _BudgetExceeded(
                f"template does more than {self.limits.max_iterations} steps of work (loop turns, calls, list items)"
            )
        if self.iterations >= self.next_check:
            self.next_check = self.iterations + 1024
            if time.thread_time() > self.deadline:
                raise _BudgetExceeded(f"template took more than {self.limits.max_seconds:g} s of CPU time")

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


_PLAIN_SCALARS = (str, int, float, bool, type(None))


def printable(value: Any, _depth: int = 0) -> Any:
    """Refuse to turn into text anything whose text is not the same on every run.

    `str()` of a function, method, generator or most objects is a repr with
    a memory address (`<bound method ... at 0x7f43...>`), which changes with
    every process: the request hash, the lock and the pages would differ
    between identical builds.  Only text, numbers, booleans, None and lists,
    tuples and mappings of them print; everything else is a template error.
    Applied to every `{{ }}`, `~`, `|string`, `|join`, `|pprint` and `%`."""
    if isinstance(value, _PLAIN_SCALARS) or isinstance(value, jinja2.Undefined):
        return value
    if _depth < 20:
        if isinstance(value, (list, tuple)):
            for item in value:
                printable(item, _depth + 1)
            return value
        if isinstance(value, dict):
            for key, item in value.items():
                printable(key, _depth + 1)
                printable(item, _depth + 1)
            return value
    kind = "a function" if callable(value) else f"a {type(value).__name__} object"
    raise jinja2.exceptions.SecurityError(
        f"cannot print {kind}: only text, numbers, lists and mappings print the same on every run "
        "(call it, or |list a filter's result)"
    )


def _ps_text(value: Any) -> Any:
    return printable(value)


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
        it = cast(nodes.Expr, node.iter)  # a loop's iterable is always an expression
        node.iter = self._call("__ps_iter", it, RECURSIVE_TURN_COST) if node.recursive else self._call("__ps_iter", it)
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

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        # `a ~ b` is str() on both sides, outside finalize.
        self.generic_visit(node)
        node.nodes = [self._call("__ps_text", n) for n in node.nodes]
        return self._call("__ps_check", node)

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
        flt: nodes.Filter | None = node.filter
        while flt is not None:
            flt.args = [self.visit(a) for a in flt.args]
            flt.kwargs = [self.visit(k) for k in flt.kwargs]
            flt = flt.node if isinstance(flt.node, nodes.Filter) else None
        node.body = [self.visit(n) for n in node.body]
        return node

    visit_Filter = _wrap
    visit_Add = _wrap
    visit_List = _wrap
    visit_Dict = _wrap


def projected(n: int, what: str) -> None:
    if n > _budget.limits.max_output_chars:
        raise _BudgetExceeded(f"{what} would build {n} characters, over the {_budget.limits.max_output_chars} limit")


_FORMAT_SPEC = re.compile(rb"%(?:\([^)]*\))?[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")


def _check_percent_format(fmt: str | bytes | bytearray, args: Any) -> None:
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
    projected(len(fmt) + specs * widest + 10 * _weight(args), "% formatting")


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
            guarded: nodes.Template = _Guard().visit(tree)
            return guarded
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
                        projected(_weight(seq) * n if isinstance(seq, (list, tuple)) else len(seq) * n, "repetition")
                        if isinstance(seq, (list, tuple)):
                            items = len(seq) * max(n, 0)
                            if items > _budget.limits.max_items:
                                raise _BudgetExceeded(f"repetition would build a list of {items} items, over the {_budget.limits.max_items} limit")
        elif operator == "**":
            if both_ints and right > 0 and abs(left) > 1 and left.bit_length() * right > MAX_INT_BITS:
                raise _BudgetExceeded(f"template computes a number over {MAX_INT_BITS} bits (exponent too large)")
        elif operator == "%" and isinstance(left, (str, bytes, bytearray)):
            printable(right)
            _check_percent_format(left, right)
        elif operator == "+":
            if both_ints:
                pass
            elif isinstance(left, (str, bytes, bytearray)) and isinstance(right, type(left)):
                projected(len(left) + len(right), "concatenation")
            elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
                projected(_weight(left) + _weight(right), "concatenation")
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
        s = str(printable(v))
        size += len(s) + len(d)
        projected(size, "join")
        items.append(s)
        _budget.tick()
    return d.join(items)


_safe_join.jinja_pass_arg = _PassArg.environment  # type: ignore[attr-defined]


def _safe_replace(s: str, old: str, new: str, count: int | None = None) -> str:
    s, old, new = str(s), str(old), str(new)
    hits = (len(s) + 1) if old == "" else s.count(old)
    if count is not None and count >= 0:
        hits = min(hits, count)
    projected(len(s) + hits * max(len(new) - len(old), 0), "replace")
    return s.replace(old, new) if count is None else s.replace(old, new, count)


def _safe_center(s: str, width: int = 80) -> str:
    projected(int(width), "center")
    return str(s).center(width)


def _safe_indent(s: str, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    pad = width if isinstance(width, str) else " " * int(width) if int(width) < 10_000 else None
    if pad is None:
        raise _BudgetExceeded("indent width too large in template")
    s = str(s)
    projected(len(s) + len(pad) * (s.count("\n") + 1), "indent")
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
            projected(size, "sum")
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


def _printable_filter(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(value: Any, *args: Any, **kwargs: Any) -> Any:
        return func(printable(value), *args, **kwargs)

    return wrapper


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
        "string": _printable_filter(base["string"]),
        "pprint": _printable_filter(base["pprint"]),
    }
    for name in ("map", "select", "reject", "selectattr", "rejectattr", "items"):
        out[name] = _limit_output(base[name], name)
    out["batch"] = _limit_output(_limit_arg(base["batch"], "linecount", 1, "batch"), "batch")
    out["slice"] = _limit_output(_limit_arg(base["slice"], "slices", 2, "slice"), "slice")
    for name in ("wordwrap", "urlize"):
        out[name] = _limit_text(base[name], name)
    return out

