"""Drivers of toolsearch's own front doors for the front-door contract
(``toolsearch.testing.FrontDoorContract``): every way into toolsearch's tool search, run
by one scripted model (``toolsearch.testing.Brain``) through the framework's own machinery.

Each driver turns the same script into its framework's calls (a ``FunctionChatModel`` for
the advisor, an OpenAI-format loop for the SDK-loop helper, a ``Model`` for the Agents SDK,
fake LangChain chat models for LangGraph and the LangChain middleware, a ``FunctionModel``
for pydantic-ai, the proxy's two MCP tools) and reports the tools offered on every model
request and the text of every tool result. The tools record when they really run.
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Callable
from typing import Any

from toolsearch.testing import Brain, Door, Trace, search_names

# -- the advisor ------------------------------------------------------------------------------


class AdvisorDoor(Door):
    name = "advisor"

    def setup(self) -> None:
        from toolsearch import ToolSearchToolCallingAdvisor

        # the contract is the search loop's: on its few tools the default working set would
        # send every tool and pre-retrieve (tests/conftest.py, cold_search)
        self.advisor = ToolSearchToolCallingAdvisor(
            tool_index=self.index,
            undiscovered_tool_policy="hint",
            search_log=self.log,
            load_all="never",
            preload_results=0,
        )
        self.advisor.add_search_listener(self.events.append)

    def _client(self, brain: Brain, session: str | None) -> Any:
        from toolsearch import AssistantMessage, ChatClient, ToolCall, ToolResponseMessage
        from toolsearch.models import FunctionChatModel
        from toolsearch.models.wire_names import OPENAI_NAMES, request_names, wire_result_text
        from toolsearch.tools.function import FunctionToolCallback

        search = self.advisor.search_tool_name

        def script(messages: list[Any], tools: list[Any]) -> AssistantMessage:
            # the request as the OpenAI adapter sends it: its wire names, tools and results
            names = request_names(OPENAI_NAMES, [t.name for t in tools], messages)
            last = messages[-1]
            if isinstance(last, ToolResponseMessage):
                for response in last.responses:
                    text = wire_result_text(response, names)
                    self.trace.outputs.append(text)
                    if response.name == search:
                        brain.saw_search_result(search_names(text))
            step = brain.next([names.wire(t.name) for t in tools])
            if step[0] == "answer":
                return AssistantMessage(content="done")
            name = search if step[0] == "search" else names.real(step[1])
            args = {"query": step[1]} if step[0] == "search" else {}
            call = ToolCall(id=f"c{len(brain.offered)}", name=name, arguments=json.dumps(args))
            return AssistantMessage(tool_calls=(call,))

        callbacks = [
            FunctionToolCallback.from_schema(
                lambda arguments, n=n: self._ran(n),
                name=n,
                description=d,
                input_schema={"type": "object", "properties": {}},
            )
            for n, d in self.catalog
        ]
        client = ChatClient.builder(FunctionChatModel(script)).default_advisors(self.advisor)
        spec = client.build().prompt("help me").tools(callbacks)
        if session is not None:
            from toolsearch import CONVERSATION_ID

            spec = spec.advisors(lambda a: a.param(CONVERSATION_ID, session))
        return spec

    def run(self, brain: Brain, session: str | None = None) -> Trace:
        self._client(brain, session).call()
        return self.trace

    async def arun(self, brain: Brain, session: str | None = None) -> Trace:
        await self._client(brain, session).acall()
        return self.trace

    def discovered(self, session: str) -> list[str]:
        return self.advisor.discovered_tools(session)


# -- the plain-SDK loop helper ----------------------------------------------------------------


class SdkLoopDoor(Door):
    name = "sdk-loop"
    is_async = True

    def setup(self) -> None:
        from toolsearch.integrations.sdk_loop import ToolSearchLoop

        definitions = [
            {"type": "function", "function": {"name": n, "description": d, "parameters": {}}}
            for n, d in self.catalog
        ]
        self.loop = ToolSearchLoop(definitions, index=self.index, search_log=self.log)
        self.loop.sessions.add_search_listener(self.events.append)

    def run(self, brain: Brain, session: str | None = None) -> Trace:
        with self.loop.session(session) as conversation:
            for turn in range(10):
                tools = conversation.tools("openai")
                step = brain.next([t["function"]["name"] for t in tools])
                if step[0] == "answer":
                    break
                name = self.loop.search_tool_name if step[0] == "search" else step[1]
                args = {"query": step[1]} if step[0] == "search" else {}
                call = {"id": f"c{turn}", "function": {"name": name, "arguments": json.dumps(args)}}
                result = conversation.openai_result(call)
                if result is not None:
                    brain.saw_search_result(search_names(result["content"]))
                    self.trace.outputs.append(result["content"])
                    continue
                refusal = conversation.refusal(name, "openai")
                own = conversation.tool_name(name, "openai")
                if refusal is not None:
                    self.trace.outputs.append(refusal)
                    continue
                try:  # the loop's own tool dispatch, reporting the outcome once it ran
                    output = self._ran(own)
                except Exception:
                    conversation.record_outcome(name, False, "openai")
                    raise
                conversation.record_outcome(name, True, "openai")
                self.trace.outputs.append(output)
        return self.trace

    async def arun(self, brain: Brain, session: str | None = None) -> Trace:
        """The same loop as an ``AsyncOpenAI`` app writes it: the async twins."""
        conversation = self.loop.session(session)
        try:
            for turn in range(10):
                tools = await conversation.atools("openai")
                step = brain.next([t["function"]["name"] for t in tools])
                if step[0] == "answer":
                    break
                name = self.loop.search_tool_name if step[0] == "search" else step[1]
                args = {"query": step[1]} if step[0] == "search" else {}
                call = {"id": f"c{turn}", "function": {"name": name, "arguments": json.dumps(args)}}
                result = await conversation.aopenai_result(call)
                if result is not None:
                    brain.saw_search_result(search_names(result["content"]))
                    self.trace.outputs.append(result["content"])
                    continue
                refusal = await conversation.arefusal(name, "openai")
                if refusal is not None:
                    self.trace.outputs.append(refusal)
                    continue
                ok = False
                try:
                    self.trace.outputs.append(self._ran(conversation.tool_name(name, "openai")))
                    ok = True
                finally:
                    await conversation.arecord_outcome(name, ok, "openai")
        finally:
            await conversation.aclose()
        return self.trace

    def discovered(self, session: str) -> list[str]:
        return self.loop.session(session).discovered


# -- the OpenAI Agents SDK --------------------------------------------------------------------


class AgentsDoor(Door):
    name = "openai-agents"
    is_async = True

    def setup(self) -> None:
        from agents import FunctionTool, set_tracing_disabled

        from toolsearch.integrations.openai_agents import ToolSearchAgentTools

        set_tracing_disabled(True)

        def invoke(name: str) -> Any:
            async def on_invoke(ctx: Any, arguments: str) -> str:
                return self._ran(name)

            return on_invoke

        tools = [
            FunctionTool(
                name=n,
                description=d,
                params_json_schema={
                    "type": "object",
                    "properties": {},
                    "additionalProperties": False,
                },
                on_invoke_tool=invoke(n),
            )
            for n, d in self.catalog
        ]
        self.search = ToolSearchAgentTools(tools, index=self.index, search_log=self.log)
        self.search.sessions.add_search_listener(self.events.append)

    def _agent(self, brain: Brain) -> Any:
        from agents import Agent
        from agents.items import ModelResponse
        from agents.models.interface import Model
        from agents.testing import assistant_message, function_call
        from agents.usage import Usage

        door = self

        class BrainModel(Model):
            async def get_response(self, system_instructions: Any, input: Any, *a: Any, **k: Any):
                tools = a[2] if len(a) > 2 else k.get("tools", [])
                items = input if isinstance(input, list) else []
                outputs = [
                    i
                    for i in items
                    if isinstance(i, dict) and i.get("type") == "function_call_output"
                ]
                if outputs:
                    text = str(outputs[-1]["output"])
                    door.trace.outputs.append(text)
                    if text.startswith("["):
                        brain.saw_search_result(search_names(text))
                step = brain.next([t.name for t in tools])
                if step[0] == "answer":
                    output = [assistant_message("done")]
                elif step[0] == "search":
                    args = {"query": step[1], "maxResults": None}
                    output = [
                        function_call(
                            door.search.search_tool_name, args, call_id=f"c{len(brain.offered)}"
                        )
                    ]
                else:
                    output = [function_call(step[1], {}, call_id=f"c{len(brain.offered)}")]
                return ModelResponse(output=output, usage=Usage(), response_id=None)

            def stream_response(self, *args: Any, **kwargs: Any) -> Any:
                raise NotImplementedError

        return Agent(name="a", model=BrainModel(), tools=self.search.tools)

    async def arun(self, brain: Brain, session: str | None = None) -> Trace:
        from agents import SQLiteSession

        sdk_session = SQLiteSession(session) if session is not None else None
        await self.search.run(self._agent(brain), "help me", session=sdk_session)
        return self.trace

    def run(self, brain: Brain, session: str | None = None) -> Trace:
        return asyncio.run(self.arun(brain, session))

    def discovered(self, session: str) -> list[str]:
        return self.search.discovered(session)


# -- LangChain chat models for LangGraph and the middleware -----------------------------------


def _brain_chat_model(
    brain: Brain, door: Door, search_name: str, args_of: Callable[[str], dict[str, Any]]
) -> Any:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class BrainChatModel(BaseChatModel):
        bound: list[str] = []  # noqa: RUF012 - a pydantic field, copied per instance

        @property
        def _llm_type(self) -> str:
            return "brain"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            names = [t["name"] if isinstance(t, dict) else t.name for t in tools]
            return self.model_copy(update={"bound": names})

        def _reply(self, messages: list[Any]) -> AIMessage:
            last = messages[-1]
            if isinstance(last, ToolMessage):
                text = str(last.content)
                door.trace.outputs.append(text)
                if last.name == search_name or text.startswith(("[", "Available tools: ")):
                    listed = text.removeprefix("Available tools: ")
                    names = ast.literal_eval(listed) if listed.startswith("[") else []
                    brain.saw_search_result([str(n) for n in names])
            step = brain.next(self.bound)
            if step[0] == "answer":
                return AIMessage("done")
            name = search_name if step[0] == "search" else step[1]
            args = args_of(step[1]) if step[0] == "search" else {}
            return AIMessage(
                "", tool_calls=[{"name": name, "args": args, "id": f"c{len(brain.offered)}"}]
            )

        def _generate(
            self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

        async def _agenerate(
            self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    return BrainChatModel()


def _langchain_tools(door: Door) -> list[Any]:
    from langchain_core.tools import StructuredTool

    def make(name: str, description: str) -> Any:
        def run() -> str:
            return door._ran(name)

        return StructuredTool.from_function(func=run, name=name, description=description)

    return [make(n, d) for n, d in door.catalog]


def _config(session: str | None) -> dict[str, Any] | None:
    return {"configurable": {"thread_id": session}} if session is not None else None


class LangGraphDoor(Door):
    name = "langgraph"
    is_async = True

    def setup(self) -> None:
        from langgraph.checkpoint.memory import InMemorySaver

        from toolsearch.integrations.langgraph import ToolSearchToolRetriever

        self.retriever = ToolSearchToolRetriever(
            _langchain_tools(self), index=self.index, search_log=self.log
        )
        self.retriever.sessions.add_search_listener(self.events.append)
        self.saver = InMemorySaver()

    def _graph(self, brain: Brain, session: str | None) -> Any:
        from toolsearch.integrations.langgraph import create_agent

        llm = _brain_chat_model(brain, self, "retrieve_tools", lambda q: {"query": q})
        builder = create_agent(llm, self.retriever)
        return builder.compile(checkpointer=self.saver if session is not None else None)

    async def arun(self, brain: Brain, session: str | None = None) -> Trace:
        state = {"messages": [{"role": "user", "content": "help me"}]}
        await self._graph(brain, session).ainvoke(state, _config(session))
        return self.trace

    def run(self, brain: Brain, session: str | None = None) -> Trace:
        state = {"messages": [{"role": "user", "content": "help me"}]}
        self._graph(brain, session).invoke(state, _config(session))
        return self.trace

    def discovered(self, session: str) -> list[str]:
        return self.retriever.registry.discovered(session)


class LangChainDoor(Door):
    name = "langchain"
    is_async = True

    def setup(self) -> None:
        from langgraph.checkpoint.memory import InMemorySaver

        from toolsearch.integrations.langchain import ToolSearchMiddleware

        self.middleware = ToolSearchMiddleware(
            index=self.index, search_listeners=[self.events.append], search_log=self.log
        )
        self.tools = _langchain_tools(self)
        self.saver = InMemorySaver()

    def _agent(self, brain: Brain, session: str | None) -> Any:
        from langchain.agents import create_agent

        llm = _brain_chat_model(
            brain, self, self.middleware.search_tool_name, lambda q: {"query": q}
        )
        return create_agent(
            llm,
            tools=self.tools,
            middleware=[self.middleware],
            checkpointer=self.saver if session is not None else None,
        )

    async def arun(self, brain: Brain, session: str | None = None) -> Trace:
        state = {"messages": [{"role": "user", "content": "help me"}]}
        await self._agent(brain, session).ainvoke(state, _config(session))
        return self.trace

    def run(self, brain: Brain, session: str | None = None) -> Trace:
        state = {"messages": [{"role": "user", "content": "help me"}]}
        self._agent(brain, session).invoke(state, _config(session))
        return self.trace

    def discovered(self, session: str) -> list[str]:
        return self.middleware.sessions.discovered(session)


# -- pydantic-ai ------------------------------------------------------------------------------


class PydanticAIDoor(Door):
    name = "pydantic-ai"
    is_async = True
    keeps_discoveries = False  # pydantic-ai shows what its own message history discovered
    throwaway_runs = False  # pydantic-ai gives every run a conversation_id (continued later)

    def setup(self) -> None:
        from toolsearch.integrations.pydantic_ai import ToolSearchStrategy

        self.strategy = ToolSearchStrategy(
            self.index, search_listeners=[self.events.append], search_log=self.log
        )

    def _agent(self, brain: Brain) -> Any:
        from pydantic_ai import Agent, Tool
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel
        from pydantic_ai.toolsets import FunctionToolset

        from toolsearch.integrations.pydantic_ai import toolsearch_tool_search

        def make(name: str, description: str) -> Any:
            def run() -> str:
                return self._ran(name)

            return Tool(run, name=name, description=description)

        def script(messages: list[Any], info: AgentInfo) -> ModelResponse:
            for part in messages[-1].parts:
                if isinstance(part, ToolReturnPart):
                    content = part.content
                    self.trace.outputs.append(str(content))
                    if isinstance(content, dict) and "discovered_tools" in content:
                        brain.saw_search_result([t["name"] for t in content["discovered_tools"]])
                elif type(part).__name__ == "RetryPromptPart":
                    self.trace.outputs.append(str(part.content))
            step = brain.next([t.name for t in info.function_tools])
            if step[0] == "answer":
                return ModelResponse(parts=[TextPart("done")])
            if step[0] == "search":
                return ModelResponse(parts=[ToolCallPart("search_tools", {"queries": [step[1]]})])
            return ModelResponse(parts=[ToolCallPart(step[1], {})])

        toolset = FunctionToolset([make(n, d) for n, d in self.catalog]).defer_loading()
        return Agent(
            FunctionModel(script),
            toolsets=[toolset],
            capabilities=[toolsearch_tool_search(self.strategy)],
        )

    async def arun(self, brain: Brain, session: str | None = None) -> Trace:
        kwargs = {"conversation_id": session} if session is not None else {}
        await self._agent(brain).run("help me", **kwargs)
        return self.trace

    def run(self, brain: Brain, session: str | None = None) -> Trace:
        return asyncio.run(self.arun(brain, session))

    def discovered(self, session: str) -> list[str]:
        return self.strategy.sessions.discovered(session)


# -- the MCP proxy ----------------------------------------------------------------------------


class McpProxyDoor(Door):
    name = "mcp-proxy"
    is_async = True
    keeps_discoveries = False  # the proxy hands out schemas; its clients see two tools
    per_session = False
    calls_by_argument = True

    def setup(self) -> None:
        from mcp.types import CallToolResult, TextContent

        from toolsearch.mcp.proxy import McpSearchProxy
        from toolsearch.tools.function import FunctionToolCallback

        callbacks = [
            FunctionToolCallback.from_schema(
                lambda arguments: "", name=n, description=d, input_schema={"type": "object"}
            )
            for n, d in self.catalog
        ]
        names = {n for n, _ in self.catalog}
        door = self

        class Provider:
            server_names = ("demo",)
            connected_servers: dict[str, Any] = {}  # noqa: RUF012 - no prompts or resources

            async def aconnect(self) -> None: ...

            def add_listener(self, listener: Any) -> None: ...

            def current_tool_callbacks(self) -> list[Any]:
                return callbacks

            async def acall_tool_result(self, name: str, arguments: Any, **kwargs: Any) -> Any:
                if name not in names:
                    return CallToolResult(
                        content=[TextContent(type="text", text="no")], isError=True
                    )
                return CallToolResult(content=[TextContent(type="text", text=door._ran(name))])

        self.proxy = McpSearchProxy(
            Provider(),  # type: ignore[arg-type]
            index=self.index,
            search_listeners=[self.events.append],
            search_log=self.log,
        )
        asyncio.run(self.proxy.start())  # connects the fake servers, builds the index

    async def arun(self, brain: Brain, session: str | None = None) -> Trace:
        offered = [t.name for t in self.proxy.tool_definitions()]
        for _ in range(10):
            step = brain.next(offered)
            if step[0] == "answer":
                break
            if step[0] == "search":
                result = await self.proxy._handle(self.proxy.search_tool_name, {"query": step[1]})
            else:
                result = await self.proxy._handle(self.proxy.call_tool_name, {"name": step[1]})
            text = "".join(getattr(block, "text", "") for block in result.content)
            self.trace.outputs.append(text)
            if step[0] == "search":
                brain.saw_search_result(search_names(text))
        return self.trace

    def run(self, brain: Brain, session: str | None = None) -> Trace:
        return asyncio.run(self.arun(brain, session))

    def discovered(self, session: str) -> list[str]:
        return []
