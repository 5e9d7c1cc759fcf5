"""Contract suites and test doubles for code that plugs into toolsearch.

Each suite is a mixin class of pytest tests (the cachetools ``CacheTestMixin`` idea):
subclass it in a test module as ``class Test...``, implement its factory hook, and pytest
runs every check of the contract against your implementation.

========================  ==========================================  ====================
suite                     for                                         the hook
========================  ==========================================  ====================
``ToolIndexContract``     a ``ToolIndex`` (a search backend)          ``make_index()``
``SessionStoreContract``  a ``SessionStore`` (session state)          ``make_store(...)``
``ToolCallbackContract``  a kind of ``ToolCallback``                  ``make_tools()``
``ProviderContract``      a chat-model adapter on a provider's SDK    ``spec``
``FrontDoorContract``     a front door (an agent framework's way in)  ``door_class``
========================  ==========================================  ====================

The doubles: :class:`FakeClock`, :func:`tool_definition`, :func:`function_tool`, the
scripted chat models (``FunctionChatModel``, ``TestChatModel``), a fake provider endpoint
(:class:`ProviderEndpoint`) and the scripted model of the front doors (:class:`Brain`).

This package imports pytest (the ``toolsearch[testing]`` extra); ``import toolsearch``
never imports it. See ``docs/testing.md``.
"""

import pytest

# assertions in the suites explain their failures as in a test module (before the imports)
for _module in (
    "callback_contract",
    "front_door_contract",
    "front_doors",
    "index_contract",
    "index_sessions",
    "provider_contract",
    "provider_spec",
    "store_contract",
):
    pytest.register_assert_rewrite(f"toolsearch.testing.{_module}")

from toolsearch.testing.callback_contract import ToolCallbackContract  # noqa: E402
from toolsearch.testing.fakes import (  # noqa: E402
    EMPTY_OBJECT,
    FakeClock,
    FunctionChatModel,
    ScriptFunction,
    TestChatModel,
    function_tool,
    tool_definition,
    word_overlap,
)
from toolsearch.testing.front_door_contract import FrontDoorContract  # noqa: E402
from toolsearch.testing.front_doors import (  # noqa: E402
    DOOR_CATALOG,
    FOUND,
    ODD_CATALOG,
    Brain,
    Door,
    Trace,
    search_names,
)
from toolsearch.testing.index_catalog import (  # noqa: E402
    CATALOG,
    CATEGORIES,
    NAMES,
    OTHER_TOOLS,
)
from toolsearch.testing.index_contract import ToolIndexContract  # noqa: E402
from toolsearch.testing.index_sessions import check_response, search, snapshot  # noqa: E402
from toolsearch.testing.provider_contract import ProviderContract  # noqa: E402
from toolsearch.testing.provider_server import (  # noqa: E402
    FixtureServer,
    ProviderEndpoint,
    http_library,
)
from toolsearch.testing.provider_spec import (  # noqa: E402
    AUTH,
    RATE,
    SERVER,
    AdapterSpec,
    Body,
    ErrorCase,
    Item,
)
from toolsearch.testing.store_contract import SessionStoreContract  # noqa: E402

__all__ = [
    "AUTH",
    "CATALOG",
    "CATEGORIES",
    "DOOR_CATALOG",
    "EMPTY_OBJECT",
    "FOUND",
    "NAMES",
    "ODD_CATALOG",
    "OTHER_TOOLS",
    "RATE",
    "SERVER",
    "AdapterSpec",
    "Body",
    "Brain",
    "Door",
    "ErrorCase",
    "FakeClock",
    "FixtureServer",
    "FrontDoorContract",
    "FunctionChatModel",
    "Item",
    "ProviderContract",
    "ProviderEndpoint",
    "ScriptFunction",
    "SessionStoreContract",
    "TestChatModel",
    "ToolCallbackContract",
    "ToolIndexContract",
    "Trace",
    "check_response",
    "function_tool",
    "http_library",
    "search",
    "search_names",
    "snapshot",
    "tool_definition",
    "word_overlap",
]
