"""``ToolSearchOptions``: the tool-search advisor's options are declared once.

The advisor's effective defaults, the settings' defaults and the model's defaults are the
same values; every settings field reaches the advisor; ``options=`` and keyword arguments
build the same advisor and may not both give an option; the loop layer picks the
settings-driven advisor through a hook, without importing the search layer.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from toolsearch import (
    ChatClient,
    ToolCallingAdvisor,
    ToolSearchOptions,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.indexes import RegexToolIndex
from toolsearch.loop import client as client_module
from toolsearch.models import FunctionChatModel
from toolsearch.search.advisor import ToolSearchAdvisorKwargs
from toolsearch.search.options import ToolSearchOptionsDict
from toolsearch.settings import ToolSearchSettings, configured_advisor, tool_search_advisor
from toolsearch.testing import function_tool

ROOT = Path(__file__).resolve().parents[2]
FIELDS = list(ToolSearchOptions.model_fields)

# a valid value different from the default, for every option
NON_DEFAULTS: dict[str, Any] = {
    "max_results": 7,
    "system_message_suffix": "Use {search_tool_name}.",
    "reference_tool_name_accumulation": False,
    "session_id_key_name": "tenant",
    "order": 350,
    "pinned_tools": ("notes_write_note", "email_send_message"),
    "search_tool_name": "findTools",
    "undiscovered_tool_policy": "hint",
    "search_results_with_summaries": True,
    "exclude_loaded_tools": False,
    "multi_query": True,
    "search": "native",
    "injection": "results",
    "call_tool_name": "useTool",
    "max_loaded_tools": 12,
    "unload_idle_turns": 3,
    "unload_at": "turn",
    "preload_results": 0,
    "preload_min_score": 0.7,
    "load_all": "never",
    "cost_model": "claude",
    "traffic_seconds": 120.0,
    "warm_tools": 5,
}
SETTINGS_ONLY = {
    "enabled",
    "index_type",
    "lru_max_sessions",
    "ttl_seconds",
    "search_log",
    "bm25_min_score",
    "embedder",
    "reranker",
    "uri",
    "collection",
    "usage_memory",
    "usage_memory_autosave_every",
    "usage_memory_redis_url",
    "usage_memory_namespace",
    "usage_memory_tenant",
    "usage_memory_store_text",
    "usage_memory_shadow",
}


@pytest.fixture(autouse=True)
def clean_environment(clean_toolsearch_environment: None) -> None:
    """Every test here starts without ``TOOLSEARCH_*`` variables or a ``toolsearch.toml``."""


def _advisor(**kwargs: Any) -> ToolSearchToolCallingAdvisor:
    return ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), **kwargs)


def _tool_advisor(client: ChatClient) -> Any:
    _, chain = client.prompt("hi").tools(function_tool("t")).build_request()
    [found] = [a for a in chain.advisors if isinstance(a, ToolCallingAdvisor)]
    return found


# -- one set of defaults -----------------------------------------------------------------


def test_the_test_values_cover_every_option() -> None:
    assert set(NON_DEFAULTS) == set(FIELDS)
    defaults = ToolSearchOptions()
    assert all(getattr(defaults, name) != value for name, value in NON_DEFAULTS.items())


def test_every_default_is_the_advisors_and_the_settings() -> None:
    defaults = ToolSearchOptions()
    advisor = ToolSearchToolCallingAdvisor()
    settings = ToolSearchSettings()
    assert advisor.options == defaults
    assert settings.options == defaults
    for name in FIELDS:
        default = ToolSearchOptions.model_fields[name].default
        assert getattr(defaults, name) == default, name
        assert getattr(settings, name) == default, name
        assert getattr(advisor.options, name) == default, name
        if name != "pinned_tools":  # the advisor keeps those with its pinned callbacks
            assert getattr(advisor, name) == default, name
    assert advisor.order == defaults.order == ToolCallingAdvisor().order


def test_the_settings_declare_no_option_of_their_own() -> None:
    """The settings inherit every option (its default and bounds) instead of repeating it."""
    assert issubclass(ToolSearchSettings, ToolSearchOptions)
    own = set(inspect.get_annotations(ToolSearchSettings))
    assert own == SETTINGS_ONLY
    for name in FIELDS:
        mine, theirs = ToolSearchSettings.model_fields[name], ToolSearchOptions.model_fields[name]
        assert repr(mine) == repr(theirs), name  # FieldInfo compares by identity


def test_the_typed_keywords_match_the_options() -> None:
    hints = typing.get_type_hints(ToolSearchOptionsDict)
    assert set(hints) == set(FIELDS) - {"pinned_tools"}
    for name, hint in hints.items():
        assert hint == ToolSearchOptions.model_fields[name].annotation, name
    loop = set(typing.get_type_hints(ToolSearchAdvisorKwargs)) - set(hints)
    plain = set(inspect.signature(ToolCallingAdvisor.__init__).parameters)
    assert loop == plain - {"self", "tool_calling_manager", "order"}


# -- every setting reaches the advisor ---------------------------------------------------


def test_every_option_in_the_settings_reaches_the_advisor() -> None:
    settings = ToolSearchSettings(**NON_DEFAULTS, index_type="regex")
    advisor = tool_search_advisor(settings)
    assert advisor.options == ToolSearchOptions(**NON_DEFAULTS)
    assert type(advisor.options) is ToolSearchOptions
    for name, value in NON_DEFAULTS.items():
        if name != "pinned_tools":
            assert getattr(advisor, name) == value, name
    assert advisor.order == 350


def test_every_option_from_the_environment_reaches_the_advisor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__ENABLED", "true")
    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__INDEX_TYPE", "regex")
    for name, value in NON_DEFAULTS.items():
        text = json.dumps(list(value)) if isinstance(value, tuple) else str(value)
        monkeypatch.setenv(f"TOOLSEARCH_TOOL_SEARCH__{name.upper()}", text)
    advisor = _tool_advisor(ChatClient.builder(FunctionChatModel(lambda m, t: "ok")).build())
    assert isinstance(advisor, ToolSearchToolCallingAdvisor)
    assert advisor.options == ToolSearchOptions(**NON_DEFAULTS)
    assert configured_advisor() is not None


# -- options= and keyword arguments ------------------------------------------------------


def test_options_and_keyword_arguments_build_the_same_advisor() -> None:
    by_keywords = _advisor(**NON_DEFAULTS)
    by_options = _advisor(options=ToolSearchOptions(**NON_DEFAULTS))
    assert by_keywords.options == by_options.options == ToolSearchOptions(**NON_DEFAULTS)
    for name in FIELDS:
        if name != "pinned_tools":
            assert getattr(by_keywords, name) == getattr(by_options, name), name
    assert by_keywords.order == by_options.order == 350


def test_an_option_given_both_ways_is_refused() -> None:
    options = ToolSearchOptions(max_results=3)
    with pytest.raises(TypeError, match="max_results given both as keyword arguments and in"):
        _advisor(options=options, max_results=4)
    with pytest.raises(TypeError, match="exclude_loaded_tools, max_results given both"):
        _advisor(options=options, max_results=3, exclude_loaded_tools=True)  # equal: too
    assert _advisor(options=options.replace(max_results=4)).max_results == 4


def test_settings_may_be_given_as_the_options() -> None:
    advisor = _advisor(options=ToolSearchSettings(max_results=2, enabled=True))
    assert type(advisor.options) is ToolSearchOptions
    assert advisor.options == ToolSearchOptions(max_results=2)
    with pytest.raises(TypeError, match="options must be a ToolSearchOptions"):
        _advisor(options={"max_results": 2})  # type: ignore[arg-type]


def test_pinned_tools_add_names_and_callbacks_to_the_options() -> None:
    callback = function_tool("calendar_create_event")
    advisor = _advisor(
        options=ToolSearchOptions(pinned_tools=("notes_write_note",)),
        pinned_tools=["email_send_message", callback, "notes_write_note"],
    )
    assert advisor.options.pinned_tools == (
        "notes_write_note",
        "email_send_message",
        "calendar_create_event",
    )
    assert _advisor(pinned_tools=["a"]).options == ToolSearchOptions(pinned_tools=("a",))


def test_loop_options_still_pass_through() -> None:
    advisor = _advisor(max_iterations=3, stream_mode="eager", name="search", max_results=2)
    assert (advisor.max_iterations, advisor.stream_mode, advisor.name) == (3, "eager", "search")
    assert advisor.conversation_history_enabled is True
    with pytest.raises(TypeError):
        _advisor(no_such_option=1)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_results": 0}, "max_results must be between 1 and 10 (got 0)"),
        ({"max_results": 11}, "max_results must be between 1 and 10 (got 11)"),
        (
            {"undiscovered_tool_policy": "ignore"},
            "undiscovered_tool_policy must be 'execute' or 'hint' (got 'ignore')",
        ),
    ],
)
def test_bad_values_keep_their_messages(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        _advisor(**options)
    assert str(caught.value) == message
    assert not isinstance(caught.value, ValidationError)
    with pytest.raises(ValidationError):
        ToolSearchOptions(**options)
    with pytest.raises(ValidationError):
        ToolSearchSettings(**options)
    with pytest.raises(ValidationError):
        ToolSearchOptions().replace(**options)


def test_options_are_frozen_and_refuse_unknown_fields() -> None:
    options = ToolSearchOptions()
    with pytest.raises(ValidationError):
        options.max_results = 3  # type: ignore[misc]
    with pytest.raises(ValidationError, match="maxresults"):
        ToolSearchOptions(maxresults=3)  # type: ignore[call-arg]
    assert ToolSearchSettings(no_such_setting=1) == ToolSearchSettings()  # as always: ignored
    advisor = _advisor()
    with pytest.raises(AttributeError):
        advisor.max_results = 3  # type: ignore[misc]
    assert hash(options) == hash(ToolSearchOptions())


# -- the loop layer does not import the search layer ---------------------------------------


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_loop_module_imports_the_search_layer_or_the_settings() -> None:
    for path in sorted((ROOT / "toolsearch" / "loop").glob("*.py")):
        for name in _imported_modules(path):
            assert not name.startswith(("toolsearch.search", "toolsearch.settings")), (path, name)
            assert name not in {"toolsearch", "toolsearch.settings"}, (path, name)


LOOP_ALONE = """
import importlib.util, sys, types
# load the loop package without toolsearch/__init__ (which imports everything)
spec = importlib.util.find_spec("toolsearch")
package = types.ModuleType("toolsearch")
package.__path__ = list(spec.submodule_search_locations)
sys.modules["toolsearch"] = package
from toolsearch.loop import ChatClient, ToolCallingAdvisor
from toolsearch.chat.model import ChatModel
from toolsearch.chat.response import ChatResponse
from toolsearch.chat.messages import AssistantMessage

class Model(ChatModel):
    def call(self, prompt):
        return ChatResponse(AssistantMessage(content="ok"))

client = ChatClient.builder(Model()).build()  # TOOLSEARCH_TOOL_SEARCH__ENABLED=true is set
assert client.prompt("hi").call().content() == "ok"
_, chain = client.prompt("hi").build_request()
assert [type(a) for a in chain.advisors if isinstance(a, ToolCallingAdvisor)] == [
    ToolCallingAdvisor
]
loaded = [m for m in sys.modules if m.startswith(("toolsearch.search", "toolsearch.settings"))]
assert not loaded, loaded
print("ok")
"""


def test_the_loop_package_works_alone_without_the_search_package() -> None:
    environment = {**os.environ, "TOOLSEARCH_TOOL_SEARCH__ENABLED": "true"}
    out = subprocess.run(
        [sys.executable, "-c", LOOP_ALONE],
        capture_output=True,
        text=True,
        check=False,
        env=environment,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


FROM_TOOLSEARCH = """
import sys
from toolsearch import ChatClient, ToolSearchToolCallingAdvisor
from toolsearch.models import FunctionChatModel
assert "toolsearch.settings" not in sys.modules  # read only when a client is built
client = ChatClient.builder(FunctionChatModel(lambda m, t: "ok")).build()
_, chain = client.prompt("hi").tools([]).build_request()
print(sorted(type(a).__name__ for a in chain.advisors))
"""


@pytest.mark.parametrize(
    ("enabled", "expected"),
    [("true", "ToolSearchToolCallingAdvisor"), ("false", "ToolCallingAdvisor")],
)
def test_from_toolsearch_import_chat_client_honours_the_environment(
    enabled: str, expected: str
) -> None:
    environment = {**os.environ, "TOOLSEARCH_TOOL_SEARCH__ENABLED": enabled}
    out = subprocess.run(
        [sys.executable, "-c", FROM_TOOLSEARCH],
        capture_output=True,
        text=True,
        check=False,
        env=environment,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == repr([expected])


def test_without_the_hook_the_environment_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__ENABLED", "true")
    model = FunctionChatModel(lambda m, t: "ok")
    assert isinstance(_tool_advisor(ChatClient.create(model)), ToolSearchToolCallingAdvisor)
    previous = client_module.set_auto_tool_advisor_provider(None)
    try:
        assert type(_tool_advisor(ChatClient.create(model))) is ToolCallingAdvisor
    finally:
        client_module.set_auto_tool_advisor_provider(previous)
    assert previous is not None
    assert isinstance(_tool_advisor(ChatClient.create(model)), ToolSearchToolCallingAdvisor)
