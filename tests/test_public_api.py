"""The public API's names import and keep their documented shapes (messages, tools, contexts)."""

import subprocess
import sys

import toolsearch
from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    SystemMessage,
    ToolCall,
    ToolCallback,
    ToolCallingAdvisor,
    ToolCallingManager,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    ToolParam,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
    tool,
)
from toolsearch.models import FunctionChatModel


def test_all_names_resolve():
    for name in toolsearch.__all__:
        assert getattr(toolsearch, name) is not None, name


def test_conversation_id_key():
    assert CONVERSATION_ID == "chat_memory_conversation_id"


def test_message_shapes():
    call = ToolCall(id="1", name="x", arguments='{"a": 1}')
    assistant = AssistantMessage(content=None, tool_calls=[call])
    assert assistant.tool_calls == (call,)
    response = ToolResponseMessage(responses=[ToolResponse(id="1", name="x", response_data="ok")])
    assert response.responses[0].response_data == "ok"
    assert SystemMessage(content="s").content == "s"
    assert UserMessage(content="u").content == "u"


def test_tool_definition_shape():
    definition = ToolDefinition(name="n", description="d", input_schema={"type": "object"})
    assert (definition.name, definition.description, definition.input_schema) == (
        "n",
        "d",
        {"type": "object"},
    )
    assert ToolMetadata().return_direct is False


def test_tool_context_is_read_only():
    context = ToolContext({"tenantId": "acme"})
    assert context.context["tenantId"] == "acme"
    try:
        context.context["tenantId"] = "other"  # type: ignore[index]
    except TypeError:
        pass
    else:
        raise AssertionError("ToolContext.context must be read-only")


def test_function_model_accepts_plain_string_replies():
    model = FunctionChatModel(lambda messages, tools: "hello")
    assert ChatClient.create(model).prompt("hi").call().content() == "hello"


def test_contract_class_example_registers():
    from typing import Annotated

    class DateTimeTools:
        @tool(description="Get the current date and time in the user's timezone")
        def get_current_date_time(self) -> str:
            return "now"

        @tool(description="Set a user alarm for the given time, provided in ISO-8601 format")
        def set_alarm(
            self, time: Annotated[str, ToolParam(description="Time in ISO-8601 format")]
        ) -> str:
            return time

    seen: list[list[str]] = []

    def script(messages, tools):
        seen.append([t.name for t in tools])
        return "ok"

    ChatClient.create(FunctionChatModel(script)).prompt("x").tools(DateTimeTools()).call()
    assert seen == [["get_current_date_time", "set_alarm"]]
    assert isinstance(ToolCallingAdvisor(), ToolCallingAdvisor)
    assert isinstance(ToolCallingManager(), ToolCallingManager)
    from toolsearch.tools import tool_callbacks

    assert all(isinstance(cb, ToolCallback) for cb in tool_callbacks(DateTimeTools()))


def test_core_import_stays_light():
    """`import toolsearch` must not pull in event loops, databases, numeric libraries or
    OpenTelemetry (loaded on the first traced call only)."""
    code = (
        "import sys, toolsearch; "
        "print(sorted(m for m in ('asyncio', 'sqlite3', 'numpy', 'tantivy', 'faiss', "
        "'torch', 'concurrent.futures', 'opentelemetry') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_testing_package_stays_out_of_the_library():
    """`import toolsearch` never imports ``toolsearch.testing`` (or pytest, which it needs);
    importing ``toolsearch.testing`` loads no provider SDK, framework or numeric library."""
    code = (
        "import sys, toolsearch\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest')"
        " or m.startswith('toolsearch.testing')))\n"
        "import toolsearch.testing as testing\n"
        "assert all(getattr(testing, name) is not None for name in testing.__all__)\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'google.genai', 'langchain_core',"
        " 'pydantic_ai', 'agents', 'mcp', 'tantivy', 'numpy', 'torch', 'redis', 'pymilvus')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "[]"]
