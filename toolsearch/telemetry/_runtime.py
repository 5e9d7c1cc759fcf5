"""The one place OpenTelemetry is imported: on first use, and only if it is installed.

:func:`otel` returns the loaded API (tracer, instruments, helpers) or ``None`` when
``opentelemetry-api`` is missing; the answer is computed once and kept, so the no-op path
costs one global read per hook.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

__all__ = ["INSTRUMENTATION_NAME", "Otel", "otel"]

INSTRUMENTATION_NAME = "toolsearch"

_log = logging.getLogger(__name__)
_UNSET: Any = object()
_state: Any = _UNSET
_lock = threading.Lock()


class Otel:
    """The OpenTelemetry API as the hooks use it: one tracer, the metric instruments."""

    def __init__(self) -> None:
        from opentelemetry import context, metrics, trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        from toolsearch._version import __version__

        self.context = context
        self.trace = trace
        self.SpanKind = SpanKind
        self.Status = Status
        self.StatusCode = StatusCode
        # proxies: they follow a provider set later (tests, the instrument agent)
        self.tracer = trace.get_tracer(INSTRUMENTATION_NAME, __version__)
        meter = metrics.get_meter(INSTRUMENTATION_NAME, __version__)
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used per model request, by gen_ai.token.type (input, output)",
            explicit_bucket_boundaries_advisory=[
                1,
                4,
                16,
                64,
                256,
                1024,
                4096,
                16384,
                65536,
                262144,
                1048576,
            ],
        )
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Duration of model requests",
            explicit_bucket_boundaries_advisory=[
                0.01,
                0.02,
                0.04,
                0.08,
                0.16,
                0.32,
                0.64,
                1.28,
                2.56,
                5.12,
                10.24,
                20.48,
                40.96,
                81.92,
            ],
        )
        self.search_duration = meter.create_histogram(
            "toolsearch.search.duration",
            unit="s",
            description="Duration of tool searches",
            explicit_bucket_boundaries_advisory=[
                0.0001,
                0.00025,
                0.0005,
                0.001,
                0.0025,
                0.005,
                0.01,
                0.025,
                0.05,
                0.1,
                0.25,
                0.5,
                1.0,
                2.5,
            ],
        )
        self.search_hits = meter.create_histogram(
            "toolsearch.search.hits",
            unit="{tool}",
            description="Tools returned per tool search",
            explicit_bucket_boundaries_advisory=[0, 1, 2, 3, 4, 5, 6, 8, 10],
        )
        self.request_tokens = meter.create_histogram(
            "toolsearch.chat_client.token.usage",
            unit="{token}",
            description="Tokens used per ChatClient request (every model call of its tool "
            "loop), by gen_ai.token.type (input, output)",
            explicit_bucket_boundaries_advisory=[
                1,
                4,
                16,
                64,
                256,
                1024,
                4096,
                16384,
                65536,
                262144,
                1048576,
            ],
        )


def otel() -> Otel | None:
    """The loaded OpenTelemetry API, or ``None`` when it is not installed (decided once)."""
    state = _state
    if state is _UNSET:
        state = _load()
    return state  # type: ignore[no-any-return]


def _load() -> Otel | None:
    global _state
    with _lock:
        if _state is _UNSET:
            try:
                _state = Otel()
            except ImportError:
                _log.debug("opentelemetry is not installed: tracing and metrics are off")
                _state = None
        return _state  # type: ignore[no-any-return]
