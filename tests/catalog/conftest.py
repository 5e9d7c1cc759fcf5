"""Fixtures shared by the catalog command-line tests (files and Milvus)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CLI_TOOLS = [
    {
        "name": "weather_get_forecast",
        "description": "Get the weather forecast for a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    {
        "name": "billing_refund_payment",
        "description": "Refund a payment in full or in part.",
        "input_schema": {"type": "object", "properties": {"payment_id": {"type": "string"}}},
    },
    {
        "name": "calendar_create_event",
        "description": "Create a calendar event with attendees.",
        "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}},
    },
]
"""Three tools of three services: a JSONL catalog the command-line tests build from."""


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    path = tmp_path / "tools.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in CLI_TOOLS) + "\n", encoding="utf-8")
    return path
