"""The telemetry tests use the ``otel`` fixture of ``tests/otel_fixtures.py`` (exposed by the
root ``conftest.py``, so the front-door contract suite shares the same providers)."""
