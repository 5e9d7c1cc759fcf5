"""The providers table (toolsearch.models.providers): every place that names providers
reads it (or is checked against it), the docs table equals it, and each row says what its
adapter really does."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import get_args

import pytest

import toolsearch.models
from toolsearch.models import ProviderChatModel
from toolsearch.models.providers import PROVIDERS, provider, provider_names

ROOT = Path(__file__).resolve().parents[2]
NAMES = "openai, openai-responses, anthropic, gemini"


def _docs_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "providers.md").read_text()
    head = text.split("\n## ", 1)[0]
    lines = [line for line in head.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]


def _first_code(cell: str) -> str:
    return cell.split("`")[1] if "`" in cell else cell


def test_the_docs_table_is_the_code_table() -> None:
    rows = _docs_rows()
    assert [_first_code(row[0]) for row in rows] == list(provider_names())
    for row, cells in zip(PROVIDERS, rows, strict=True):
        _, cls, extra, sdk, api, credentials, found, native, otel = cells
        assert cls == f"`{row.adapter_name}`", row.name
        assert extra == f"`toolsearch[{row.extra}]`", row.name
        assert sdk == f"`{row.sdk}`", row.name
        assert api == row.api, row.name
        assert all(f"`{variable}`" in credentials for variable in row.api_key_variables)
        assert (_first_code(found) if row.deferral else found) == (row.deferral or "in `tools`")
        assert _first_code(native) == (row.native_search or "none"), row.name
        assert otel == f"`{row.otel_name}`", row.name


def test_every_row_imports_and_its_extra_exists() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for row in PROVIDERS:
        cls = row.adapter_class()
        assert issubclass(cls, ProviderChatModel), row.name
        assert row.extra in extras, row.name
        assert getattr(toolsearch.models, row.adapter_name) is cls
        assert row.adapter_name in toolsearch.models.__all__
        assert callable(row.render_tools)


@pytest.mark.parametrize("row", PROVIDERS, ids=lambda row: row.name)
def test_each_row_says_what_its_adapter_does(row, monkeypatch) -> None:
    """Constructed offline (no client, no request): the adapter's own ``provider``,
    ``native_tool_search`` and default ``tool_search`` are the row's, and so is the
    ``gen_ai.provider.name`` its spans carry."""
    module = row.sdk.replace("google-genai", "google.genai")
    pytest.importorskip(module, reason=f"toolsearch[{row.extra}] is not installed")
    from toolsearch.telemetry.models import provider_name

    model = row.adapter_class()("some-model")
    assert model.provider == row.name
    assert getattr(model, "native_tool_search", None) == row.native_search
    assert getattr(model, "tool_search", None) == row.deferral
    assert provider_name(model) == row.otel_name


def test_the_search_layer_keys_its_name_rules_on_the_table() -> None:
    from toolsearch.search.sessions import NAME_RULES

    assert {name: rule for name, rule in NAME_RULES.items() if name != "portable"} == {
        row.name: row.names for row in PROVIDERS
    }


def test_the_sdk_loop_renders_every_provider_of_the_table() -> None:
    from toolsearch import ToolDefinition
    from toolsearch.integrations.sdk_loop import Provider, ToolSearchLoop

    assert get_args(Provider) == provider_names()
    loop = ToolSearchLoop([ToolDefinition(name="files.read", description="Read a file")])
    session = loop.session()
    try:
        for name in provider_names():
            assert session.tools(name)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=f"unknown provider 'nope': use one of {NAMES}"):
            session.tools("nope")  # type: ignore[arg-type]
    finally:
        session.close()


def test_an_unknown_provider_lists_the_table() -> None:
    from toolsearch_bench.live import PROVIDERS as LIVE
    from toolsearch_bench.live import parse_live_spec

    with pytest.raises(ValueError, match=f"use one of {NAMES}"):
        provider("nope")
    with pytest.raises(ValueError, match=f"PROVIDER one of {NAMES}"):
        parse_live_spec("nope:model")
    assert list(LIVE) == list(provider_names())
    for row in PROVIDERS:
        live = LIVE[row.name]
        assert f"{live.module}:{live.cls}" == row.adapter
        assert (live.env, live.extra) == (row.api_key_variables, row.extra)


def test_the_private_home_of_the_base_class_still_works() -> None:
    from toolsearch.models._provider import ProviderChatModel as Public
    from toolsearch.models._provider import SdkChatModel

    assert SdkChatModel is Public is ProviderChatModel
    assert "ProviderChatModel" in toolsearch.models.__all__
