"""One constructor shape and one casing for the front doors (issue 48).

The shared keyword arguments live once (:class:`ToolSearchDoorKwargs`, built by
:func:`door_sessions`); ``sessions=`` shares one door's sessions with another; the door
classes are all ``ToolSearch...`` and each framework's converter is ``to_tool_definition``;
the names before stay importable as deprecated aliases.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from typing import Any

import pytest

from toolsearch.indexes import RegexToolIndex
from toolsearch.integrations.door import (
    ToolSearchDoorKwargs,
    check_max_results,
    check_tool_names,
    door_sessions,
)
from toolsearch.integrations.sdk_loop import ToolSearchLoop
from toolsearch.search import InMemorySessionStore, SessionRegistry, ToolSearchEvent
from toolsearch.search.options import ToolSearchOptions
from toolsearch.testing.front_doors import RecordingSearchLog
from toolsearch.tools.definition import ToolDefinition

TOOLS = [
    ToolDefinition("get_weather", "Get the weather forecast for a city"),
    ToolDefinition("send_email", "Send an email to a recipient"),
    ToolDefinition("create_issue", "Create a GitHub issue"),
]

DOORS = [
    ("toolsearch.integrations.pydantic_ai", "ToolSearchStrategy"),
    ("toolsearch.integrations.langgraph", "ToolSearchToolRetriever"),
    ("toolsearch.integrations.langchain", "ToolSearchMiddleware"),
    ("toolsearch.integrations.openai_agents", "ToolSearchAgentTools"),
    ("toolsearch.integrations.sdk_loop", "ToolSearchLoop"),
]

RENAMED = [
    ("toolsearch.integrations.pydantic_ai", "ToolsearchStrategy", "ToolSearchStrategy"),
    ("toolsearch.integrations.pydantic_ai", "to_toolsearch_definition", "to_tool_definition"),
    (
        "toolsearch.integrations._pydantic_ai_toolset",
        "ToolsearchToolSearch",
        "ToolSearchCapability",
    ),
    ("toolsearch.integrations.langgraph", "ToolsearchToolRetriever", "ToolSearchToolRetriever"),
    ("toolsearch.integrations.langgraph", "to_toolsearch_definition", "to_tool_definition"),
    ("toolsearch.integrations.openai_agents", "ToolsearchAgentTools", "ToolSearchAgentTools"),
    ("toolsearch.integrations.openai_agents", "to_toolsearch_definition", "to_tool_definition"),
    ("toolsearch.integrations.sdk_loop", "as_definition", "to_tool_definition"),
]

_FRAMEWORK = {
    "toolsearch.integrations._pydantic_ai_toolset": "pydantic_ai",
    "toolsearch.integrations.langchain": "langchain.agents",
}


def _module(name: str) -> Any:
    if name in _FRAMEWORK:
        pytest.importorskip(_FRAMEWORK[name])
    return importlib.import_module(name)


@pytest.mark.parametrize(("module", "old", "new"), RENAMED)
def test_an_old_name_is_the_new_object_with_a_deprecation_warning(
    module: str, old: str, new: str
) -> None:
    found = _module(module)
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated; use .*\.{new}\b"):
        alias = getattr(found, old)
    assert alias is getattr(found, new)
    assert old not in found.__all__
    assert new in found.__all__


def test_from_import_of_an_old_name_warns_too() -> None:
    with pytest.warns(DeprecationWarning, match="as_definition is deprecated"):
        from toolsearch.integrations.sdk_loop import as_definition
    assert as_definition(TOOLS[0]) is TOOLS[0]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED[:1])
def test_a_new_name_and_an_unknown_one_do_not_warn(module: str, old: str, new: str) -> None:
    found = _module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(found, new)
        with pytest.raises(AttributeError, match="no_such_name"):
            found.no_such_name


@pytest.mark.parametrize(("module", "name"), DOORS)
def test_every_door_takes_the_shared_arguments_once(module: str, name: str) -> None:
    door = getattr(_module(module), name)
    assert name.startswith("ToolSearch")
    parameters = inspect.signature(door.__init__).parameters
    shared = [p for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert [str(p.annotation) for p in shared] == ["Unpack[ToolSearchDoorKwargs]"]
    spelled_out = set(parameters) & set(ToolSearchDoorKwargs.__annotations__)
    assert spelled_out == set(), f"{name} repeats shared arguments: {spelled_out}"


def test_sessions_shares_one_doors_registry_and_log_with_another() -> None:
    log = RecordingSearchLog()
    events: list[ToolSearchEvent] = []
    first = ToolSearchLoop(TOOLS, index=RegexToolIndex(), search_log=log)
    second = ToolSearchLoop(
        TOOLS, sessions=first.sessions, max_results=1, search_listeners=[events.append]
    )
    assert second.registry is first.registry
    assert second.sessions.search_log is log
    assert (first.sessions.options.max_results, second.sessions.options.max_results) == (5, 1)

    first.session("conv-1").search("weather")
    assert second.session("conv-1").discovered == ["get_weather"]  # one session store
    assert second.session("conv-2").search("email") == ["send_email"]
    assert [e.door for e in events] == ["sdk-loop"]  # its own listeners, not first's
    assert len(log.searches) == 2


def test_a_door_of_another_framework_shares_the_sessions_too() -> None:
    pydantic_ai = _module("toolsearch.integrations.pydantic_ai")
    loop = ToolSearchLoop(TOOLS, index=RegexToolIndex())
    strategy = pydantic_ai.ToolSearchStrategy(sessions=loop.sessions, max_results=3)
    assert strategy.registry is loop.registry
    assert strategy.sessions.door == "pydantic-ai"
    assert strategy.sessions.search_tool_name == "search_tools"


@pytest.mark.parametrize(
    "other",
    [
        {"registry": SessionRegistry(RegexToolIndex())},
        {"store": InMemorySessionStore()},
        {"index": "regex"},
    ],
)
def test_sessions_with_its_own_index_or_store_is_refused(other: dict[str, Any]) -> None:
    base = ToolSearchLoop(TOOLS, index=RegexToolIndex())
    with pytest.raises(TypeError, match="give sessions, or index"):
        ToolSearchLoop(TOOLS, sessions=base.sessions, **other)


def test_the_arguments_before_keep_working() -> None:
    registry = SessionRegistry(RegexToolIndex())
    log = RecordingSearchLog()
    loop = ToolSearchLoop(TOOLS, registry=registry, search_log=log, search_listeners=())
    assert loop.registry is registry
    assert loop.sessions.search_log is log
    stored = ToolSearchLoop(TOOLS, index=RegexToolIndex(), store=InMemorySessionStore())
    assert stored.registry is not registry
    with pytest.raises(TypeError, match="not both"):
        ToolSearchLoop(TOOLS, index="regex", registry=registry)


def test_door_sessions_names_the_door_and_keeps_its_options() -> None:
    options = ToolSearchOptions(max_results=2, search_tool_name="find")
    sessions = door_sessions(RegexToolIndex(), options, "my-door")
    assert (sessions.door, sessions.options, sessions.search_tool_name) == (
        "my-door",
        options,
        "find",
    )


def test_the_shared_checks() -> None:
    check_max_results(10)
    with pytest.raises(ValueError, match="limit must be between 1 and 10"):
        check_max_results(0, "limit")
    assert check_tool_names(["a", "b"], "search", ["b", "b"]) == ("b",)
    with pytest.raises(ValueError, match="search tool's name"):
        check_tool_names(["search"], "search")
    with pytest.raises(ValueError, match="same name"):
        check_tool_names(["a", "a"], "search")
    with pytest.raises(ValueError, match=r"not among the tools: \['c'\]"):
        check_tool_names(["a"], "search", ["c"])
