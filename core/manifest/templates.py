"""An email producer's templates as the manifest gives them: the sandbox they are parsed and
rendered in (bounded: `core.manifest.template_bounds`), the names they may read, and the
check's refusals of a template that does not parse or reads another name.

The check (`core.manifest.check`) and the rendering (`core.outbox.mail`) share this one
environment, so a template the check lets through is one the rendering can compile.
"""

from __future__ import annotations

import functools

from jinja2 import TemplateError, meta

from core.manifest.outbox_model import Message, Reminder
from core.manifest.refusal import Refusal, where
from core.manifest.template_bounds import BoundedEnvironment

TEMPLATE_NAMES = frozenset({"row", "app", "table", "moment"})
"""The names every producer's templates may read (a reminder's `link` besides)."""


@functools.cache
def template_environment() -> BoundedEnvironment:
    """The one environment templates are parsed and rendered in."""
    # Plain text mail: nothing is HTML-escaped; the sandbox keeps a template from reaching
    # Python's internals through the row's values, and bounds what a render builds.
    return BoundedEnvironment(autoescape=False, keep_trailing_newline=True)


def template_names(producer: Message | Reminder) -> frozenset[str]:
    """The names a producer's templates may read."""
    link = {producer.link} if isinstance(producer, Reminder) and producer.link else set()
    return TEMPLATE_NAMES | link


def template_refusals(at: tuple[str | int, ...], producer: Message | Reminder) -> list[Refusal]:
    """The manifest check's refusals of a producer's subject and body templates."""
    refusals = []
    allowed = template_names(producer)
    for name in ("subject", "body"):
        text = getattr(producer, name)
        if text is None:
            continue
        try:
            parsed = template_environment().parse(text)
        except TemplateError as error:
            sentence = f"the {name} is no template: {error.message or error}"
            refusals.append(Refusal(where(*at, name), sentence))
            continue
        unknown = sorted(meta.find_undeclared_variables(parsed) - allowed)
        if unknown:
            sentence = (
                f"the {name} reads {', '.join(repr(n) for n in unknown)}: a template reads"
                f" {', '.join(sorted(allowed))}"
            )
            refusals.append(Refusal(where(*at, name), sentence))
    return refusals
