"""Each integration names its extra when its framework is missing."""

from __future__ import annotations

import sys

import pytest

from toolsearch.errors import MissingExtraError


def hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError


def test_pydantic_ai(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsearch.integrations.pydantic_ai import toolsearch_tool_search

    hide(monkeypatch, "pydantic_ai", "pydantic_ai.capabilities")
    with pytest.raises(MissingExtraError, match=r"toolsearch\[pydantic-ai\]") as info:
        toolsearch_tool_search("regex")
    assert info.value.package == "pydantic-ai-slim"


def test_langgraph(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsearch.integrations.langgraph import ToolSearchToolRetriever, create_agent

    hide(monkeypatch, "langchain_core")
    with pytest.raises(MissingExtraError, match=r"toolsearch\[langgraph\]"):
        ToolSearchToolRetriever([])
    monkeypatch.undo()
    pytest.importorskip("langchain_core")
    retriever = ToolSearchToolRetriever([], index="regex")
    hide(monkeypatch, "langgraph")
    with pytest.raises(MissingExtraError, match=r"toolsearch\[langgraph\]"):
        create_agent(object(), retriever)


def test_openai_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsearch.integrations.openai_agents import ToolSearchAgentTools

    hide(monkeypatch, "agents")
    with pytest.raises(MissingExtraError, match=r"toolsearch\[openai-agents\]"):
        ToolSearchAgentTools([])
