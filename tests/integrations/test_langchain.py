"""ToolSearchMiddleware in real LangChain agents (``create_agent``), with a scripted fake
chat model: offline and deterministic."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import threading
from typing import Any

import pytest

pytest.importorskip("langchain", reason="toolsearch[langchain] is not installed")

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from toolsearch.errors import MissingExtraError
from toolsearch.integrations.langchain import DISCOVERED_KEY, ToolSearchMiddleware
from toolsearch.models.wire_names import ANTHROPIC_NAMES, GEMINI_NAMES, OPENAI_NAMES
from toolsearch.search.events import ToolSearchEvent
from toolsearch.testing.front_doors import ThreadRecordingIndex

RAN: list[str] = []  # the tools that really ran, in order


@tool
def get_weather(city: str) -> str:
    """Get the weather forecast for a city."""
    RAN.append("get_weather")
    return f"sunny in {city}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    RAN.append("send_email")
    return f"sent to {to}"


@tool
def create_issue(title: str) -> str:
    """Create a GitHub issue in a repository."""
    RAN.append("create_issue")
    return "#1"


@tool
def lookup_user(name: str) -> str:
    """Look up a user of the company directory."""
    RAN.append("lookup_user")
    return "alice"


TOOLS = [get_weather, send_email, create_issue, lookup_user]


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def call(name: str, args: dict[str, Any], call_id: str = "c") -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


class ScriptedModel(BaseChatModel):
    """A chat model that plays ``scripts[question][turn]`` (turn: the AI messages since the
    question) and records, per call, the question, the tool names bound and the system
    text. ``bind_tools`` returns a copy that knows its tools, so concurrent runs sharing the
    model record what each of them was given."""

    scripts: dict[str, list[AIMessage]]
    calls: list[tuple[str, list[str], str]]
    barrier: Any = None  # an asyncio.Barrier every run waits at on its second turn
    bound: list[str] = []  # noqa: RUF012 - a pydantic field, copied per instance

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        names = [t["name"] if isinstance(t, dict) else t.name for t in tools]
        return self.model_copy(update={"bound": names})

    def _reply(self, messages: list[BaseMessage]) -> tuple[AIMessage, int]:
        asked = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        question = str(messages[asked].content)
        turn = sum(isinstance(m, AIMessage) for m in messages[asked:])
        system = str(messages[0].content) if messages[0].type == "system" else ""
        self.calls.append((question, list(self.bound), system))
        return self.scripts[question][turn], turn

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages)[0])])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        reply, turn = self._reply(messages)
        if self.barrier is not None and turn == 1:
            await self.barrier.wait()
        return ChatResult(generations=[ChatGeneration(message=reply)])


def model(scripts: dict[str, list[AIMessage]], **kwargs: Any) -> ScriptedModel:
    return ScriptedModel(scripts=scripts, calls=[], **kwargs)


def ask(agent: Any, question: str, mode: str, thread: str | None = None) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}} if thread else None
    state = {"messages": [{"role": "user", "content": question}]}
    if mode == "sync":
        return agent.invoke(state, config)
    return asyncio.run(agent.ainvoke(state, config))


WEATHER = {
    "weather?": [
        call("search_tools", {"query": "weather forecast"}),
        call("get_weather", {"city": "Paris"}),
        AIMessage("It is sunny in Paris."),
    ]
}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_model_sees_the_search_tool_first_then_what_it_found(mode: str) -> None:
    middleware = ToolSearchMiddleware(index="bm25", always_include=["lookup_user"])
    fake = model(WEATHER)
    agent = create_agent(fake, tools=TOOLS, middleware=[middleware], system_prompt="Be brief.")

    out = ask(agent, "weather?", mode)

    assert [bound for _, bound, _ in fake.calls] == [
        ["search_tools", "lookup_user"],
        ["search_tools", "lookup_user", "get_weather"],
        ["search_tools", "lookup_user", "get_weather"],
    ]
    found, ran = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert (found.name, found.content) == ("search_tools", '["get_weather"]')
    assert (ran.name, ran.content, ran.status) == ("get_weather", "sunny in Paris", "success")
    assert RAN == ["get_weather"]
    assert out[DISCOVERED_KEY] == ["get_weather"]
    system = fake.calls[0][2]
    assert system.startswith("Be brief.\n\n")
    assert "call search_tools" in system
    assert out["messages"][-1].content == "It is sunny in Paris."
    assert middleware.sessions.registry.session_ids() == []  # the throwaway session is gone


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_undiscovered_and_unknown_calls_are_refused_and_do_not_run(mode: str) -> None:
    scripts = {
        "mail": [
            call("send_email", {"to": "bob", "body": "hi"}),
            call("no_such_tool", {}),
            call("search_tools", {"query": "send email", "max_results": 1}),
            call("send_email", {"to": "bob", "body": "hi"}),
            AIMessage("sent"),
        ]
    }
    agent = create_agent(model(scripts), tools=TOOLS, middleware=[ToolSearchMiddleware()])

    out = ask(agent, "mail", mode)

    replies = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [(m.name, m.status) for m in replies] == [
        ("send_email", "error"),
        ("no_such_tool", "error"),
        ("search_tools", "success"),
        ("send_email", "success"),
    ]
    assert "not loaded yet. Call search_tools" in replies[0].content
    assert "no tool named 'no_such_tool'" in replies[1].content
    assert replies[2].content == '["send_email"]'
    assert RAN == ["send_email"]  # only the call after the search ran


def test_concurrent_runs_without_thread_ids_never_share_discoveries() -> None:
    scripts = {
        "weather?": WEATHER["weather?"],
        "mail?": [
            call("search_tools", {"query": "send an email"}),
            call("send_email", {"to": "bob", "body": "hi"}),
            AIMessage("sent"),
        ],
    }
    middleware = ToolSearchMiddleware(index="bm25")

    async def main() -> tuple[ScriptedModel, list[dict[str, Any]]]:
        fake = model(scripts, barrier=asyncio.Barrier(2))  # both searched before either goes on
        agent = create_agent(fake, tools=TOOLS, middleware=[middleware])
        state = [{"messages": [{"role": "user", "content": q}]} for q in scripts]
        return fake, await asyncio.gather(*(agent.ainvoke(s) for s in state))

    fake, outs = asyncio.run(main())

    seen: dict[str, set[str]] = {}
    for question, bound, _ in fake.calls:
        seen.setdefault(question, set()).update(bound)
    assert seen == {
        "weather?": {"search_tools", "get_weather"},
        "mail?": {"search_tools", "send_email"},
    }
    assert [out[DISCOVERED_KEY] for out in outs] == [["get_weather"], ["send_email"]]
    assert sorted(RAN) == ["get_weather", "send_email"]
    assert middleware.sessions.registry.session_ids() == []


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_thread_keeps_its_discoveries_across_invocations_and_no_other_thread_sees_them(
    mode: str,
) -> None:
    scripts = {
        **WEATHER,
        "and tomorrow?": [call("get_weather", {"city": "Paris"}), AIMessage("sunny")],
    }
    middleware = ToolSearchMiddleware(index="bm25")
    fake = model(scripts)
    agent = create_agent(fake, tools=TOOLS, middleware=[middleware], checkpointer=InMemorySaver())

    ask(agent, "weather?", mode, thread="t1")
    again = ask(agent, "and tomorrow?", mode, thread="t1")
    other = ask(agent, "and tomorrow?", mode, thread="t2")

    bound = [(question, names) for question, names, _ in fake.calls]
    assert bound[3] == ("and tomorrow?", ["search_tools", "get_weather"])  # t1 again
    assert bound[5] == ("and tomorrow?", ["search_tools"])  # t2
    assert again["messages"][-2].content == "sunny in Paris"
    refused = other["messages"][-2]
    assert (refused.name, refused.status) == ("get_weather", "error")
    assert RAN == ["get_weather", "get_weather"]
    assert middleware.sessions.discovered("t1") == ["get_weather"]
    assert middleware.sessions.discovered("t2") == []


def test_a_search_listener_hears_the_langchain_door() -> None:
    events: list[ToolSearchEvent] = []
    middleware = ToolSearchMiddleware(index="bm25", search_listeners=[events.append])
    agent = create_agent(model(WEATHER), tools=TOOLS, middleware=[middleware])

    ask(agent, "weather?", "sync", thread="t-events")

    [event] = events
    assert (event.door, event.session_id, event.query) == (
        "langchain",
        "t-events",
        "weather forecast",
    )
    assert [hit.name for hit in event.hits] == ["get_weather"]
    assert event.visible_tools == 1


def test_the_async_path_indexes_and_searches_off_the_event_loop() -> None:
    # structure, not a wall-clock bound: the thread each indexing and search ran on
    index = ThreadRecordingIndex()
    middleware = ToolSearchMiddleware(index=index)
    agent = create_agent(model(WEATHER), tools=TOOLS, middleware=[middleware])

    async def main() -> tuple[int, dict[str, Any]]:
        out = await agent.ainvoke({"messages": [{"role": "user", "content": "weather?"}]})
        return threading.get_ident(), out

    loop_thread, out = asyncio.run(main())

    assert out[DISCOVERED_KEY] == ["get_weather"]
    assert ("search", loop_thread) not in index.threads
    assert [what for what, thread in index.threads if thread == loop_thread] == []
    assert any(what == "search" for what, _ in index.threads)


def test_a_throwaway_session_leaves_no_loaded_view_behind() -> None:
    middleware = ToolSearchMiddleware()
    tracker = middleware.sessions.loaded_tools
    viewed: list[str] = []
    update = tracker.update

    def noting(session_id: str, *args: Any, **kwargs: Any) -> Any:
        viewed.append(session_id)
        return update(session_id, *args, **kwargs)

    tracker.update = noting  # type: ignore[method-assign]
    agent = create_agent(model(WEATHER), tools=TOOLS, middleware=[middleware])

    ask(agent, "weather?", "sync")
    asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "weather?"}]}))

    assert len(set(viewed)) == 2  # one throwaway session per invocation, each viewed
    assert [sid for sid in viewed if middleware.sessions.loaded(sid) is not None] == []


def test_provider_tools_are_kept_and_the_execute_policy_runs_undiscovered_calls() -> None:
    provider_tool = {"type": "web_search", "name": "web_search"}
    scripts = {"mail": [call("send_email", {"to": "bob", "body": "hi"}), AIMessage("sent")]}
    fake = model(scripts)
    middleware = ToolSearchMiddleware(undiscovered_tool_policy="execute", system_hint=None)
    agent = create_agent(fake, tools=[*TOOLS, provider_tool], middleware=[middleware])

    out = ask(agent, "mail", "sync")

    assert [bound for _, bound, _ in fake.calls] == [
        ["search_tools", "web_search"],
        ["search_tools", "send_email", "web_search"],
    ]
    assert fake.calls[0][2] == ""  # no hint, no system message
    assert RAN == ["send_email"]
    assert out[DISCOVERED_KEY] == ["send_email"]


def test_a_session_id_callable_names_the_session() -> None:
    middleware = ToolSearchMiddleware(index="bm25", session_id=lambda rt: f"user-{rt.context}")
    agent = create_agent(model(WEATHER), tools=TOOLS, middleware=[middleware])

    agent.invoke({"messages": [{"role": "user", "content": "weather?"}]}, context="ann")

    assert middleware.sessions.discovered("user-ann") == ["get_weather"]
    assert middleware.sessions.registry.session_ids() == ["user-ann"]


def test_bad_arguments_are_refused_up_front() -> None:
    with pytest.raises(ValueError, match="max_results must be between 1 and 10"):
        ToolSearchMiddleware(max_results=0)
    with pytest.raises(ValueError, match="undiscovered_tool_policy must be"):
        ToolSearchMiddleware(undiscovered_tool_policy="ask")  # type: ignore[arg-type]
    agent = create_agent(
        model(WEATHER), tools=TOOLS, middleware=[ToolSearchMiddleware(always_include=["nope"])]
    )
    with pytest.raises(ValueError, match=r"always_include not found in request: \['nope'\]"):
        ask(agent, "weather?", "sync")


def test_the_search_tool_is_a_structured_tool_with_query_and_max_results() -> None:
    middleware = ToolSearchMiddleware(search_tool_name="find_tools")

    [search] = middleware.tools
    assert search.name == "find_tools"
    assert set(search.tool_call_schema.model_json_schema()["properties"]) == {
        "query",
        "max_results",
    }
    assert search.coroutine is not None  # type: ignore[attr-defined]


LONG_NAME = "export_the_quarterly_sales_report_as_spreadsheet_for_the_finance_teams"


@tool("github.create_issue")
def dotted(text: str) -> str:
    """Create a GitHub issue in a repository."""
    RAN.append("github.create_issue")
    return "#7"


@tool("docs/search")
def slashed(text: str) -> str:
    """Search the documentation pages of the product."""
    RAN.append("docs/search")
    return "page 3"


@tool(LONG_NAME)
def long_named(text: str) -> str:
    """Export the quarterly sales report as a spreadsheet."""
    RAN.append(LONG_NAME)
    return "report.xlsx"


@tool("get_weather")
def weather(text: str) -> str:
    """Get the weather forecast for a city."""
    RAN.append("get_weather")
    return "sunny"


ODD_TOOLS = [dotted, slashed, long_named, weather]


class ReadingModel(BaseChatModel):
    """For each query: search it, then call every name the search result gives (read from
    the result's JSON), then the next query; records the tools bound on every call."""

    queries: list[str]
    bound_per_call: list[list[Any]]
    bound: list[Any] = []  # noqa: RUF012 - a pydantic field, copied per instance

    @property
    def _llm_type(self) -> str:
        return "reading"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.model_copy(update={"bound": list(tools)})

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        self.bound_per_call.append(list(self.bound))
        step, reading = divmod(sum(isinstance(m, AIMessage) for m in messages), 2)
        if step == len(self.queries):
            return AIMessage("done")
        if not reading:
            return call("search_tools", {"query": self.queries[step], "max_results": 1}, f"s{step}")
        found = json.loads(str(messages[-1].content))
        calls = [
            {"name": n, "args": {"text": "x"}, "id": f"c{step}-{i}"} for i, n in enumerate(found)
        ]
        return AIMessage("", tool_calls=calls)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_tools_are_bound_searched_and_called_under_names_every_provider_accepts(
    mode: str,
) -> None:
    assert len(LONG_NAME) == 70
    queries = ["github issue", "documentation pages", "quarterly sales spreadsheet", "weather"]
    fake = ReadingModel(queries=queries, bound_per_call=[])
    agent = create_agent(fake, tools=ODD_TOOLS, middleware=[ToolSearchMiddleware(index="bm25")])

    out = ask(agent, "go", mode)

    bound_names = [
        [t["name"] if isinstance(t, dict) else t.name for t in b] for b in fake.bound_per_call
    ]
    assert len(bound_names) == 2 * len(queries) + 1
    for names in bound_names:
        for name in names:
            for rule in (OPENAI_NAMES, ANTHROPIC_NAMES, GEMINI_NAMES):
                assert rule.accepts(name), (rule.provider, name)
    replies = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    searches = [m for m in replies if m.name == "search_tools"]
    found = [json.loads(str(m.content)) for m in searches]
    assert [len(names) for names in found] == [1, 1, 1, 1]
    for step, names in enumerate(found):
        assert set(names) <= set(bound_names[2 * step + 1])  # bound on the next call
    wire = [names[0] for names in found]
    assert wire[:2] == ["github_create_issue", "docs_search"]
    assert wire[2].startswith("export_the_quarterly_sales_report")
    assert len(wire[2]) <= 64
    assert wire[3] == "get_weather"
    assert RAN == ["github.create_issue", "docs/search", LONG_NAME, "get_weather"]
    ran = [m for m in replies if m.name != "search_tools"]
    assert [(m.name, m.status) for m in ran] == [(name, "success") for name in wire]
    assert [m.content for m in ran] == ["#7", "page 3", "report.xlsx", "sunny"]
    assert out[DISCOVERED_KEY] == ["github.create_issue", "docs/search", LONG_NAME, "get_weather"]
    assert any(t is weather for t in fake.bound_per_call[-1])  # a valid name: no copy


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_wire_name_is_refused_until_discovered_and_an_unknown_one_always(mode: str) -> None:
    scripts = {
        "issue": [
            call("github_create_issue", {"text": "x"}),
            call("github_delete_issue", {"text": "x"}),
            call("search_tools", {"query": "github issue", "max_results": 1}),
            call("github_create_issue", {"text": "x"}),
            AIMessage("filed"),
        ]
    }
    fake = model(scripts)
    agent = create_agent(fake, tools=ODD_TOOLS, middleware=[ToolSearchMiddleware(index="bm25")])

    out = ask(agent, "issue", mode)

    replies = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [(m.name, m.status) for m in replies] == [
        ("github_create_issue", "error"),
        ("github_delete_issue", "error"),
        ("search_tools", "success"),
        ("github_create_issue", "success"),
    ]
    assert "Tool 'github_create_issue' is not loaded yet" in replies[0].content
    assert "no tool named 'github_delete_issue'" in replies[1].content
    assert replies[2].content == '["github_create_issue"]'
    assert replies[3].content == "#7"
    assert RAN == ["github.create_issue"]
    assert fake.calls[-1][1] == ["search_tools", "github_create_issue"]


def test_without_langchain_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "toolsearch.integrations.langchain")
    for name in ("langchain.agents", "langchain.agents.middleware"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    with pytest.raises(MissingExtraError, match=r"toolsearch\[langchain\]"):
        importlib.import_module("toolsearch.integrations.langchain")
