"""Without OpenTelemetry installed: nothing is imported, every path still works, and a
traced model call costs next to nothing over an untraced one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(code: str) -> str:
    blocker = "import sys; sys.modules['opentelemetry'] = None  # import raises ImportError\n"
    out = subprocess.run(
        [sys.executable, "-c", blocker + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_every_path_works_and_nothing_is_imported():
    out = run(
        """
        import asyncio, json
        from toolsearch import (AssistantMessage, ChatClient, ToolCall, ToolResponseMessage,
                                ToolSearchToolCallingAdvisor, augment_tools, telemetry, tool)
        from toolsearch.models import FunctionChatModel
        from pydantic import BaseModel

        @tool(description="Get the weather forecast for a city")
        def get_forecast(city: str) -> str:
            return "sunny"

        class Why(BaseModel):
            why: str

        def script(messages, tools):
            if isinstance(messages[-1], ToolResponseMessage):
                if messages[-1].responses[0].name == "toolSearchTool":
                    args = json.dumps({"city": "Oslo", "why": "w"})
                    return AssistantMessage(tool_calls=[ToolCall(id="2", name="get_forecast",
                                                                 arguments=args)])
                return "done"
            names = [t.name for t in tools]
            if names == ["toolSearchTool"]:
                q = json.dumps({"query": "weather forecast"})
                return AssistantMessage(tool_calls=[ToolCall(id="1", name="toolSearchTool",
                                                             arguments=q)])
            args = json.dumps({"city": "Oslo", "why": "w"})
            return AssistantMessage(tool_calls=[ToolCall(id="1", name=names[0], arguments=args)])

        tools = augment_tools(get_forecast, arguments=Why)
        plain = ChatClient.create(FunctionChatModel(script))
        search = (ChatClient.builder(FunctionChatModel(script))
                  .default_advisors(ToolSearchToolCallingAdvisor()).build())
        results = [
            plain.prompt("x").tools(tools).call().content(),
            search.prompt("x").tools(tools).call().content(),
            "".join(search.prompt("x").tools(tools).stream().content()),
            asyncio.run(plain.prompt("x").tools(tools).acall()).content(),
        ]
        async def astream():
            return "".join([c async for c in plain.prompt("x").tools(tools).astream().content()])
        results.append(asyncio.run(astream()))
        print(results, telemetry.is_available(),
              sorted(m for m in sys.modules if m.startswith("opentelemetry.")))
        """
    )
    assert out == "['done', 'done', 'done', 'done', 'done'] False []"


def test_the_no_op_path_is_cheap():
    """Without OpenTelemetry a traced model call costs three Python calls more than an
    untraced one (the wrapper, the no-op check, the cached "no OpenTelemetry" answer).
    Counted with a profiler hook, not timed: a clock would fail on a busy machine."""
    out = run(
        """
        import sys
        from toolsearch.chat.messages import UserMessage
        from toolsearch.chat.model import BaseChatModel
        from toolsearch.chat.prompt import Prompt
        from toolsearch.chat.response import ChatResponse

        class Traced(BaseChatModel):
            def call(self, prompt):
                return ChatResponse()

        class Plain:
            def call(self, prompt):
                return ChatResponse()

        prompt = Prompt([UserMessage(content="x")])
        def calls(model):
            model.call(prompt)  # first use settles what is cached
            seen = []
            def hook(frame, event, arg):
                if event in ("call", "c_call"):
                    seen.append(frame.f_code.co_filename)
            sys.setprofile(hook)
            try:
                model.call(prompt)
            finally:
                sys.setprofile(None)
            return seen
        traced, plain = calls(Traced()), calls(Plain())
        print(len(traced) - len(plain), any("opentelemetry" in f for f in traced))
        """
    )
    assert out == "3 False"
