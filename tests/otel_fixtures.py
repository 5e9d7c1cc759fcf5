"""The ``otel`` fixture: one SDK tracer provider and meter provider for the whole run (a
process can set each globally once, so every test directory shares these): spans go to an
in-memory exporter, cleared before every test; metrics to an in-memory reader with delta
temporality, drained before every test. The root ``conftest.py`` exposes the fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolsearch import telemetry


@dataclass
class Telemetry:
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self) -> list[ReadableSpan]:
        return sorted(self.exporter.get_finished_spans(), key=lambda s: s.start_time or 0)

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name.startswith(prefix)]

    def one(self, prefix: str) -> ReadableSpan:
        found = self.named(prefix)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def exact(self, name: str) -> ReadableSpan:
        found = [s for s in self.spans() if s.name == name]
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def tree(self) -> list[str]:
        """Every span as ``"  " * depth + name``, in start order."""
        spans = self.spans()
        by_id = {s.context.span_id: s for s in spans}

        def depth(span: ReadableSpan) -> int:
            d = 0
            while span.parent is not None and span.parent.span_id in by_id:
                span = by_id[span.parent.span_id]
                d += 1
            return d

        return ["  " * depth(s) + s.name for s in spans]

    def parent_of(self, span: ReadableSpan) -> ReadableSpan | None:
        if span.parent is None:
            return None
        return next((s for s in self.spans() if s.context.span_id == span.parent.span_id), None)

    def histograms(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        """``{metric name: [(attributes, point)]}`` recorded since the last call."""
        data = self.reader.get_metrics_data()
        out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        if data is None:
            return out
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        out.setdefault(metric.name, []).append((dict(point.attributes), point))
        return out


@pytest.fixture(scope="session")
def _providers() -> Telemetry:
    exporter = InMemorySpanExporter()
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):  # someone set one already: add our exporter
        current.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
    reader = InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    return Telemetry(exporter, reader)


@pytest.fixture
def otel(_providers: Telemetry, monkeypatch: pytest.MonkeyPatch) -> Iterator[Telemetry]:
    """Spans and metrics of this test only, content capture off."""
    monkeypatch.delenv(telemetry.CAPTURE_CONTENT_ENV, raising=False)
    telemetry.set_capture_content(None)
    _providers.exporter.clear()
    _providers.histograms()
    yield _providers
    telemetry.set_capture_content(None)
