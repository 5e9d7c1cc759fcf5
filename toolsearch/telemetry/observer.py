"""OpenTelemetry as the core's observer: the tracing hooks behind :mod:`toolsearch.observe`.

``import toolsearch`` calls :func:`instrument` once, so tracing needs no setup (without
``opentelemetry-api`` every hook is a no-op). :func:`uninstrument` takes it off again, for
an application that wants its own observer or none.
"""

from __future__ import annotations

from toolsearch import observe
from toolsearch.telemetry import hooks
from toolsearch.telemetry._runtime import otel
from toolsearch.telemetry.models import instrument_model_class

__all__ = ["OpenTelemetryObserver", "instrument", "uninstrument"]


class OpenTelemetryObserver:
    """Spans and metrics for every hook point (:mod:`toolsearch.telemetry.hooks`)."""

    chat_client_call = staticmethod(hooks.chat_client_call)
    chat_client_acall = staticmethod(hooks.chat_client_acall)
    chat_client_stream = staticmethod(hooks.chat_client_stream)
    chat_client_astream = staticmethod(hooks.chat_client_astream)
    model_class_defined = staticmethod(instrument_model_class)
    tool_span = staticmethod(hooks.tool_span)
    annotate_tool_span = staticmethod(hooks.annotate_tool_span)
    search_span = staticmethod(hooks.search_span)

    @staticmethod
    def warm_up() -> None:
        """Load the OpenTelemetry API now (the hooks load it at their first use)."""
        otel()


_OBSERVER = OpenTelemetryObserver()


def instrument() -> None:
    """Attach OpenTelemetry tracing to the core's hooks (again a no-op if attached)."""
    if observe.attached_observer() is not _OBSERVER:
        observe.attach_observer(_OBSERVER)


def uninstrument() -> None:
    """Detach it; classes it already wrapped keep calling straight through untraced."""
    if observe.attached_observer() is _OBSERVER:
        observe.attach_observer(None)
