"""OpenTelemetry tracing and metrics for the loop, the models, the tools and the tool search.

Nothing to set up here: ``import toolsearch`` attaches this package to the core's hooks
(:mod:`toolsearch.observe`; :func:`toolsearch.telemetry.observer.uninstrument` takes it
off), and spans and metrics go to the globally configured tracer and meter
providers (``opentelemetry.trace.set_tracer_provider`` / ``metrics.set_meter_provider``, or
the ``opentelemetry-instrument`` agent). Without ``opentelemetry-api`` installed
(``toolsearch[otel]``) nothing is imported and every hook is a no-op; the choice is made
once, on first use. ``import toolsearch`` never imports OpenTelemetry.

What is traced (names and attributes follow the OpenTelemetry GenAI semantic conventions):

* ``invoke_agent chat_client``: one span per ``ChatClient`` request (``call``,
  ``stream``, ``acall``, ``astream``), the parent of everything below; it carries the
  summed token usage of the whole tool loop and the number of model calls;
* ``chat {model}``: one span per model call, for every model built on
  :class:`~toolsearch.chat.model.BaseChatModel` (the provider adapters and the scripted
  models alike);
* ``execute_tool {tool name}``: one span per tool the loop runs;
* ``retrieval {index}``: one span per search of the tool-search tool, inside its
  ``execute_tool`` span.

Tool arguments, tool results, search queries and hits, messages, system instructions and
tool definitions are recorded only when content capture is on:
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` in the environment, or
:func:`set_capture_content` (which wins over the environment). A conversation id is an
identifier, not content: it is recorded as ``gen_ai.conversation.id`` either way.

See ``docs/observability.md`` for a console-exporter setup and a sample trace.
"""

from __future__ import annotations

import os

from toolsearch.observe import hash_session_id

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "capture_content",
    "hash_session_id",
    "is_available",
    "set_capture_content",
]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI conventions' opt-in for recording message content (``true`` to record)."""

_capture_override: bool | None = None


def set_capture_content(enabled: bool | None) -> None:
    """Record content (tool arguments and results, search queries and hits, messages, tool
    definitions) in spans, or not; ``None`` goes back to reading :data:`CAPTURE_CONTENT_ENV`."""
    global _capture_override
    _capture_override = None if enabled is None else bool(enabled)


def capture_content() -> bool:
    """Whether spans record content now (the setting, else the environment variable)."""
    if _capture_override is not None:
        return _capture_override
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in ("true", "1", "yes")


def is_available() -> bool:
    """Whether ``opentelemetry-api`` is installed (imports it on the first call)."""
    from toolsearch.telemetry._runtime import otel

    return otel() is not None
