"""What an email template may build: a bounded, immutable sandbox.

Jinja's sandbox keeps a template from Python's internals; it does not bound the work. A
template renders inside the write that queues its email, under the row's lock, so one
that builds a gigabyte (`{{ "x" * 10**9 }}` took 15 s) or loops for ever holds the row and
the worker. Here every render has a budget, and whatever goes past it stops the render
with `TemplateTooCostly` (the email keeps its words as written, logged):

- the email's words: at most `RENDERED_MAX` characters;
- what it builds on the way, every string and list an operator, a `~`, a filter or a
  method makes counted: at most `BUILT_MAX` characters;
- its time: `RENDER_SECONDS`, looked at on each loop step, operation and piece of output.

An operation whose result alone would pass the bounds is refused before it runs (a
repetition, a power, a width or count argument, a `%` or `format` width, a `replace`,
`join`, `indent` or `expandtabs` that multiplies), so no single step allocates past them.
The environment is Jinja's immutable sandbox (no `append` or `update` on a list or dict),
without `lipsum`.
"""

from __future__ import annotations

import functools
import re
import string
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from jinja2 import Template, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

RENDERED_MAX = 100_000
"""The most characters an email's subject or body renders to."""
BUILT_MAX = 1_000_000
"""The most characters (list items counted by their length) a render builds in all."""
RENDER_SECONDS = 0.5
"""The longest a render may take (a plain email takes well under a millisecond)."""


class TemplateTooCostly(SecurityError):
    """A render went past its budget; it is stopped, the words kept as written."""


@dataclass
class Budget:
    """One render's bounds: its deadline and what it has built so far."""

    deadline: float
    built: int = 0

    def spend(self, size: int) -> None:
        self.built += size
        if self.built > BUILT_MAX:
            raise TemplateTooCostly(f"the template builds more than {BUILT_MAX} characters")
        self.tick()

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise TemplateTooCostly(f"the template takes longer than {RENDER_SECONDS} s")


_BUDGET: ContextVar[Budget | None] = ContextVar("adminium_template_budget", default=None)


def _spend(value: Any) -> Any:
    """Count what an operation built against the render's budget; the value."""
    budget = _BUDGET.get()
    if budget is not None:
        budget.spend(size_of(value))
    return value


def size_of(value: Any, limit: int = BUILT_MAX + 1) -> int:
    """A value's size as the budget counts it, near what its text would take: a text's
    length, a number's digits, a list's or a mapping's items, nested (counted up to
    `limit`, enough to refuse it)."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return value.bit_length() // 3 + 1
    if isinstance(value, float):
        return 24
    if isinstance(value, list | tuple | set | frozenset | dict):
        total = 2 * len(value) + 2  # a separator each, the brackets
        for item in value.items() if isinstance(value, dict) else value:
            if total >= limit:
                break
            total += size_of(item, limit - total)
        return total
    return 0


def _refuse_past(size: int, what: str) -> None:
    if size > RENDERED_MAX:
        raise TemplateTooCostly(f"{what} would build {size} characters (at most {RENDERED_MAX})")


_PRINTF_WIDTHS = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d*)(?:\.(\*|\d*))?")


def _numbers(values: Iterable[Any]) -> int:
    return sum(abs(v) for v in values if isinstance(v, int) and not isinstance(v, bool))


def _format_widths(text: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> int:
    """The widths and precisions a `str.format` text asks for, added up (a width taken from
    the arguments, `{:{}}`, counts every number argument)."""
    total = 0
    for _, _, spec, _ in string.Formatter().parse(text):
        if spec:
            total += sum(int(d) for d in re.findall(r"\d+", spec))
            if "{" in spec:
                total += _numbers((*args, *kwargs.values()))
    return total


def _printf_widths(text: str, args: Any) -> int:
    """The widths and precisions a `%` text asks for, `*` ones read from its arguments."""
    total = 0
    for width, precision in _PRINTF_WIDTHS.findall(text):
        total += sum(int(d) for d in (width, precision) if d.isdigit())
        if "*" in (width, precision):
            total += _numbers(args if isinstance(args, tuple) else (args,))
    return total


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse an operator whose result alone passes the bounds, before it runs."""
    if operator == "*":
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, str | list | tuple) and isinstance(count, int):
                _refuse_past(size_of(seq) * max(count, 0), "a repetition")
    elif operator == "**" and isinstance(left, int) and isinstance(right, int):
        _refuse_past(abs(right) * max(abs(left), 2).bit_length() // 3, "a power")
    elif operator == "%" and isinstance(left, str):
        _refuse_past(len(left) + _printf_widths(left, right), "a % format")


Sizer = Callable[[str, tuple[Any, ...], Mapping[str, Any]], int]


def _join_size(sep: str, items: list[Any]) -> int:
    return size_of(items) + len(sep) * len(items)


_MULTIPLYING: dict[str, Sizer] = {
    "replace": lambda s, a, k: (
        len(s) + s.count(str(a[0])) * len(str(a[1])) if len(a) > 1 and a[0] else len(s)
    ),
    "join": lambda s, a, k: _join_size(s, a[0]) if a else 0,
    "expandtabs": lambda s, a, k: len(s) + s.count("\t") * _numbers((*a, *k.values(), 8)),
    "format": lambda s, a, k: len(s) + _format_widths(s, a, k),
    "format_map": lambda s, a, k: len(s) + _format_widths(s, (), a[0] if a else {}),
}
"""A text method's result size, worked out before it runs, for those that can multiply."""

_WIDTHS = frozenset(
    {"center", "ljust", "rjust", "zfill", "expandtabs", "indent", "wordwrap", "batch", "slice"}
)
"""The methods and filters whose number arguments are a width or a count of what they make."""


def _check_call(name: str, owner: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    """Refuse a call whose width, count or result alone passes the bounds, before it runs."""
    if name in _WIDTHS:
        _refuse_past(_numbers((*args, *kwargs.values())), f"{name}'s width")
    if isinstance(owner, str) and name in _MULTIPLYING:
        _refuse_past(_MULTIPLYING[name](owner, args, kwargs), f"str.{name}")


_FILTER_SIZES: dict[str, Callable[[Any, tuple[Any, ...], Mapping[str, Any]], int]] = {
    "replace": lambda v, a, k: _MULTIPLYING["replace"](str(v), a, k),
    "join": lambda v, a, k: _join_size(str(a[0] if a else k.get("d", "")), list(v)),
    "indent": lambda v, a, k: len(str(v)) + str(v).count("\n") * _numbers((*a, *k.values(), 4)),
    "format": lambda v, a, k: len(str(v)) + _printf_widths(str(v), (*a, *k.values())),
}
"""A filter's result size, worked out before it runs, for those that can multiply."""


def _bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """A filter whose arguments and result are held to the render's budget."""

    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        if _BUDGET.get() is None:
            # Jinja folds a filter of constants while compiling, outside any budget
            # (`"x"|center(10**9)` ran a minute before the first email): refused, it is
            # left to run when the template renders.
            raise TemplateTooCostly("a filter runs only inside a render's budget")
        passed = getattr(function, "jinja_pass_arg", None) is not None
        value, given = (args[1], args[2:]) if passed else (args[0], args[1:])
        if isinstance(value, Iterator):
            value = list(value)  # read once: counted, then filtered
            args = (args[0], value, *given) if passed else (value, *given)
        _check_call(name, None, given, kwargs)
        if name in _FILTER_SIZES:
            _refuse_past(_FILTER_SIZES[name](value, given, kwargs), f"the {name} filter")
        return _spend(function(*args, **kwargs))

    return bounded


class BoundedCode(CodeGenerator):
    """The template's code with each loop's steps and each `~` held to the budget."""

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        steps = nodes.Call(nodes.EnvironmentAttribute("bounded_steps"), [node.iter], [], None, None)
        wrapped = nodes.For(node.target, steps, node.body, node.else_, node.test, node.recursive)
        wrapped.set_lineno(node.lineno)
        super().visit_For(wrapped, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_join(")
        super().visit_Concat(node, frame)
        self.write(")")


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with every render held to a budget (see the module)."""

    code_generator_class = BoundedCode
    intercepted_binops = frozenset({"*", "**", "%", "+", "//", "-"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.globals.pop("lipsum", None)
        self.filters = {n: _bounded_filter(n, f) for n, f in self.filters.items()}

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if _BUDGET.get() is not None:
            _check_binop(operator, left, right)
        return _spend(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        if _BUDGET.get() is not None:
            target = getattr(__obj, "__wrapped__", __obj)
            owner = getattr(target, "__self__", None)
            if isinstance(owner, str) and getattr(target, "__name__", "") == "join" and args:
                args = (list(args[0]), *args[1:])  # read once: counted, then joined
            _check_call(getattr(target, "__name__", ""), owner, args, kwargs)
        return _spend(super().call(__context, __obj, *args, **kwargs))

    def bounded_steps(self, items: Iterable[Any]) -> Iterator[Any]:
        """A loop's items, the budget's time looked at before each step."""
        budget = _BUDGET.get()
        for item in items:
            if budget is not None:
                budget.tick()
            yield item

    def bounded_join(self, text: str) -> str:
        """What a `~` built, counted."""
        _spend(text)
        return text


def render_bounded(template: Template, context: Mapping[str, Any]) -> str:
    """A template rendered within its budget; `TemplateTooCostly` past it."""
    token = _BUDGET.set(Budget(time.monotonic() + RENDER_SECONDS))
    try:
        pieces: list[str] = []
        size = 0
        budget = _BUDGET.get()
        assert budget is not None
        try:
            for piece in template.generate(context):
                size += len(piece)
                if size > RENDERED_MAX:
                    raise TemplateTooCostly(
                        f"the template renders more than {RENDERED_MAX} characters"
                    )
                budget.tick()
                pieces.append(piece)
        except RecursionError:
            raise TemplateTooCostly("the template calls itself too deep") from None
        return "".join(pieces)
    finally:
        _BUDGET.reset(token)
