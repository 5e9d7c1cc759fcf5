"""The working set (toolsearch.search.working_set): every tool when the full list costs
less, pre-retrieval before the first model call, a warm set where it pays, ToolChange
records on the requests, and the loaded view's wire names and cache-miss cause."""

from __future__ import annotations

import json

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    ToolCall,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.chat.options import ToolChange
from toolsearch.costs import MODEL_FAMILIES, Traffic
from toolsearch.indexes import Bm25ToolIndex, RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search.working_set import ChangeTracker, plan_working_set
from toolsearch.search.working_set.warm import StaticWarmSet, WarmTool
from toolsearch.testing import function_tool
from toolsearch.tools.definition import ToolDefinition

TOOLS = [
    function_tool("send_email", "Send an email message to a recipient"),
    function_tool("get_weather", "Get the weather forecast for a city"),
    function_tool("create_ticket", "Open a support ticket for a customer"),
]
SEARCH = ToolDefinition("toolSearchTool", "Search the tools", {"type": "object"})


def defs(n: int, prefix: str = "tool") -> list[ToolDefinition]:
    return [ToolDefinition(f"{prefix}_{i}", "d", {"type": "object"}) for i in range(n)]


def plan(n: int, size: int, family: str = "gpt-5.6", **kw):
    return plan_working_set(
        defs(n),
        search_definition=SEARCH,
        tokens=lambda d: 100 if d is SEARCH else size,
        shape=MODEL_FAMILIES[family],
        traffic=kw.pop("traffic", Traffic()),
        max_results=5,
        **kw,
    )


# -- the plan --------------------------------------------------------------------------------


def test_a_small_catalog_gets_every_tool_and_a_large_one_the_search_loop() -> None:
    """39 tools of 150 tokens (5,850) held cached cost 0.1x plus a write spread over three
    requests, about 1,010 a request, less than the search tool and five tools fresh (850
    ... here 100 + 5 x 150 = 850): no. 30 tools (4,500): 4,500 x 0.1833 = 825 < 850: yes."""
    assert plan(30, 150).load_all
    assert not plan(158, 150).load_all
    assert not plan(30, 150, load_all="never").load_all
    assert plan(158, 150, load_all="always").load_all


def test_sparse_traffic_makes_the_full_list_dearer() -> None:
    """A conversation every 10 minutes finds the 5-minute entry gone: the full list is
    written at 1.25x per conversation, so the same 30 tools no longer pay."""
    assert plan(30, 150, traffic=Traffic(30)).load_all
    assert not plan(30, 150, traffic=Traffic(600)).load_all


def test_a_warm_set_is_held_when_it_reaches_the_minimum_and_not_on_breakpoints() -> None:
    warm = [WarmTool(f"tool_{i}") for i in range(10)]
    held = plan(158, 150, warm=warm)
    assert held.warm == tuple(f"tool_{i}" for i in range(10))  # 100 + 1,500 >= 1,024
    small = plan(158, 150, warm=warm[:3])  # 550 tokens: billed fresh every request
    assert small.warm == ()
    assert small.reason == "warm set too small to cache"
    anthropic = plan(158, 150, family="claude", warm=warm)
    assert anthropic.warm == ()
    assert anthropic.reason == "no breakpoint after the warm set"


def test_change_tracker_records_additions_and_removals_at_their_positions() -> None:
    tracker = ChangeTracker(["search", "a"])
    assert tracker.update(["search", "a"], 1) == ()
    assert tracker.update(["search", "a", "b"], 3) == (ToolChange("add", ("b",), 3),)
    changes = tracker.update(["search", "b", "c"], 5)
    assert changes[1:] == (ToolChange("remove", ("a",), 5), ToolChange("add", ("c",), 5))


# -- through the advisor ---------------------------------------------------------------------


def recording(script):
    seen: list[tuple[list[str], tuple[ToolChange, ...]]] = []

    def model(messages, tools):
        return script(messages, [t.name for t in tools])

    chat = FunctionChatModel(model)
    real = chat.call

    def call(prompt):
        seen.append(
            (
                [cb.definition.name for cb in prompt.options.tool_callbacks],
                tuple(prompt.options.tool_changes),
            )
        )
        return real(prompt)

    chat.call = call  # type: ignore[method-assign]
    return chat, seen


def test_load_all_sends_every_tool_and_no_search_tool() -> None:
    def script(messages, names):
        if not any(isinstance(m, ToolResponseMessage) for m in messages):
            return AssistantMessage(
                tool_calls=[ToolCall(id="1", name="get_weather", arguments="{}")]
            )
        return AssistantMessage(content="done")

    chat, seen = recording(script)
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), load_all="auto")
    ChatClient.builder(chat).default_advisors(advisor).build().prompt("weather?").tools(
        TOOLS
    ).call()
    assert [names for names, _ in seen] == [[t.definition.name for t in TOOLS]] * 2


def test_pre_retrieval_loads_the_confident_hits_before_the_first_call() -> None:
    """The user's message finds get_weather before the model is asked: the first request
    holds it, the model calls it at once (no search round trip), the search tool stays."""

    def script(messages, names):
        if "get_weather" in names and not any(isinstance(m, ToolResponseMessage) for m in messages):
            return AssistantMessage(
                tool_calls=[ToolCall(id="1", name="get_weather", arguments="{}")]
            )
        return AssistantMessage(content="done")

    chat, seen = recording(script)
    # three tools: the cost model would send them all (load_all="auto", the default)
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=Bm25ToolIndex(), preload_results=1, preload_min_score=0.5, load_all="never"
    )
    client = ChatClient.builder(chat).default_advisors(advisor).build()
    client.prompt("What is the weather forecast in Paris?").tools(TOOLS).call()
    assert seen[0][0] == ["toolSearchTool", "get_weather"]
    assert len(seen) == 2


def test_a_discovery_is_a_tool_change_on_the_next_request() -> None:
    def script(messages, names):
        done = sum(isinstance(m, ToolResponseMessage) for m in messages)
        if done == 0:
            query = json.dumps({"query": "weather"})
            return AssistantMessage(
                tool_calls=[ToolCall(id="s", name="toolSearchTool", arguments=query)]
            )
        if done == 1:
            return AssistantMessage(
                tool_calls=[ToolCall(id="c", name="get_weather", arguments="{}")]
            )
        return AssistantMessage(content="done")

    chat, seen = recording(script)
    # three tools would all be sent by default (the full list costs less); nothing to
    # pre-retrieve in "help" either way
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), load_all="never")
    client = ChatClient.builder(chat).default_advisors(advisor).build()
    client.prompt("help").tools(TOOLS).advisors(lambda a: a.param(CONVERSATION_ID, "s")).call()
    assert seen[0] == (["toolSearchTool"], ())
    # after the system prompt, the user's message, the search call and its result
    assert seen[1][1] == (ToolChange("add", ("get_weather",), 4),)
    assert seen[2][1] == seen[1][1]  # the run's changes so far, in order
    view = advisor.loaded("s")
    assert view is not None
    assert view.cache_miss is None
    assert view.wire_names == view.names == ["toolSearchTool", "get_weather"]


def test_a_configured_warm_set_is_held_after_the_search_tool() -> None:
    big = [
        function_tool(f"tool_{i}", "A tool that does something useful " + "word " * 600)
        for i in range(40)
    ]

    def script(messages, names):
        return AssistantMessage(content="done")

    chat, seen = recording(script)
    # forty 600-token tools: five hits billed fresh cost more than the whole list read
    # at 0.1x, so by default every tool is sent; the warm set is weighed on the search loop
    # alone (the regex index's pre-retrieval would also load every tool matching "hi")
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(),
        warm_set=StaticWarmSet(["tool_3", "tool_7"]),
        load_all="never",
        preload_results=0,
    )
    ChatClient.builder(chat).default_advisors(advisor).build().prompt("hi").tools(big).call()
    assert seen[0][0] == ["toolSearchTool", "tool_3", "tool_7"]


def test_a_change_that_would_rewrite_a_long_history_loads_every_tool_instead() -> None:
    """GPT-5.6 (writes 1.25x, reads 0.1x), 23,000 tokens of tools, 1,000 held: with a
    short history a change costs (1,000 + 500) x 1.15 / 3 = 575 a request, less than the
    22,000 extra tokens at 0.1x (2,200): change. With 5,000 tokens of history: 2,300 >
    2,200: load every tool. Under the minimum nothing is cached, so nothing is lost."""
    from toolsearch.search.working_set import change_costs_more

    shape = MODEL_FAMILIES["gpt-5.6"]
    assert not change_costs_more(held=1000, history=500, full=23000, shape=shape)
    assert change_costs_more(held=1000, history=5000, full=23000, shape=shape)
    assert not change_costs_more(held=300, history=500, full=23000, shape=shape)


def test_a_later_turn_loads_every_tool_once_a_change_costs_more_but_a_first_turn_never() -> None:
    """Sixty tools of ~300 tokens (18,000): the search loop pays at first (a search's five
    tools fresh cost less than the list at 0.1x). Once twenty are held, bringing ten more
    would rewrite ~6,000 tokens at 1.25x about once every three requests (2,300 a
    request), more than holding the other forty at 0.1x (1,200). In the session's first
    turn the advisor never weighs it (a one-turn conversation cannot pay it back); in the
    next turn it loads every tool instead, in the tool set's own order."""
    big = [function_tool(f"tool_{i}", f"Tool number {i} " + "word " * 300) for i in range(60)]

    def script(messages, names):
        done = sum(isinstance(m, ToolResponseMessage) for m in messages)
        if done < 2:
            query = json.dumps({"query": "tool_", "maxResults": 10})
            return AssistantMessage(
                tool_calls=[ToolCall(id=f"s{done}", name="toolSearchTool", arguments=query)]
            )
        return AssistantMessage(content="done")

    chat, seen = recording(script)
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), load_all="auto")
    client = ChatClient.builder(chat).default_advisors(advisor).build()
    for _ in range(2):
        client.prompt("go").tools(big).advisors(lambda a: a.param(CONVERSATION_ID, "s")).call()
    assert [len(names) for names, _ in seen] == [1, 11, 21, 21, 61, 61]
    assert seen[4][0] == ["toolSearchTool", *(f"tool_{i}" for i in range(60))]


def test_a_change_never_costs_more_where_changes_keep_the_prefix() -> None:
    """On Anthropic's mid-conversation tool-change shape an added tool travels in the
    messages and the tools array stays put: a change rewrites nothing, so the history that
    makes a tools-first change too dear (5,000 tokens above) never makes the working set
    load every tool there. ``defer_loading`` alone is not such a shape: the working set's
    own pre-retrieved tools join its tools array in full."""
    from toolsearch.costs import CACHE_SHAPES
    from toolsearch.search.working_set import change_costs_more

    assert change_costs_more(held=1000, history=5000, full=23000, shape=CACHE_SHAPES["anthropic"])
    shape = CACHE_SHAPES["anthropic-changes"]
    assert shape.changes_keep_prefix
    assert not change_costs_more(held=1000, history=50_000, full=23000, shape=shape)
    assert not CACHE_SHAPES["anthropic-defer"].changes_keep_prefix


def test_a_later_turn_keeps_changing_when_the_cost_model_keeps_the_prefix() -> None:
    """The scenario above under ``cost_model="anthropic-changes"``: the second turn goes on
    adding ten tools a search instead of loading all sixty, since the shape's changes
    rewrite no history."""
    big = [function_tool(f"tool_{i}", f"Tool number {i} " + "word " * 300) for i in range(60)]

    def script(messages, names):
        done = sum(isinstance(m, ToolResponseMessage) for m in messages)
        if done < 2:
            query = json.dumps({"query": "tool_", "maxResults": 10})
            return AssistantMessage(
                tool_calls=[ToolCall(id=f"s{done}", name="toolSearchTool", arguments=query)]
            )
        return AssistantMessage(content="done")

    chat, seen = recording(script)
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), load_all="auto", cost_model="anthropic-changes"
    )
    client = ChatClient.builder(chat).default_advisors(advisor).build()
    for _ in range(2):
        client.prompt("go").tools(big).advisors(lambda a: a.param(CONVERSATION_ID, "s")).call()
    assert [len(names) for names, _ in seen][:4] == [1, 11, 21, 21]
    assert all(len(names) < 61 for names, _ in seen)


def test_with_results_injection_pre_retrieved_tools_arrive_as_a_search_exchange() -> None:
    """injection="results": the tool list stays the search tool and the call tool, so the
    pre-retrieved tool reaches the model as a call of the search tool and its result (the
    definition), right after the user's message; the model calls it through the call tool
    on its first request, and the next request repeats the exchange at the same place."""
    prompts: list[list] = []

    def model(messages, tools):
        prompts.append(list(messages))
        if not any(m.role == "tool" and m.responses[0].name == "callTool" for m in messages):
            through = json.dumps({"name": "get_weather", "arguments": {}})
            return AssistantMessage(
                tool_calls=[ToolCall(id="c", name="callTool", arguments=through)]
            )
        return AssistantMessage(content="done")

    chat = FunctionChatModel(model)
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=Bm25ToolIndex(), injection="results", load_all="never"
    )
    client = ChatClient.builder(chat).default_advisors(advisor).build()
    client.prompt("What is the weather forecast in Paris?").tools(TOOLS).call()
    first, second = prompts
    assert [t.name for t in chat.requests[0].tool_definitions] == ["toolSearchTool", "callTool"]
    call, result = first[-2], first[-1]
    assert call.tool_calls[0].name == "toolSearchTool"
    carried = json.loads(result.responses[0].response_data)
    assert [d["name"] for d in carried] == ["get_weather"]
    assert "parameters" in carried[0]
    assert second[: len(first)] == first  # the exchange stays where it was: the prefix holds


def test_a_carried_exchange_keeps_its_place_in_later_turns() -> None:
    """Under a chat memory inside the loop (which never stores the exchange), the second
    turn's requests repeat the first turn's exchange at its place: the history before the
    second turn is byte-identical to what the first turn sent."""
    from toolsearch.memory import MessageChatMemoryAdvisor, MessageWindowChatMemory

    prompts: list[list] = []

    def model(messages, tools):
        prompts.append(list(messages))
        return AssistantMessage(content="done")

    chat = FunctionChatModel(model)
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=Bm25ToolIndex(), injection="results", load_all="never"
    )
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(max_messages=100), order=400)
    client = ChatClient.builder(chat).default_advisors(advisor, memory).build()
    for text in ("What is the weather forecast in Paris?", "Send an email message to Bob"):
        client.prompt(text).tools(TOOLS).advisors(lambda a: a.param(CONVERSATION_ID, "c")).call()
    first, second = prompts
    assert second[: len(first)] == first
    found = [
        json.loads(m.responses[0].response_data)[0]["name"]
        for m in second
        if isinstance(m, ToolResponseMessage)
    ]
    assert found == ["get_weather", "send_email"]
