"""A hand-written OpenAI chat-completions loop with toolsearch's tool search.

The loop is the one you would write over the ``openai`` SDK; two lines are toolsearch's:
``session.tools("openai")`` (the tools to send on this turn) and ``session.openai_result``
(the result of a search call). The model's answers are stubbed with the SDK's own mock
transport, so this runs offline: the stub searches first, then calls a tool it found.

Run: python examples/integrations/sdk_loop_openai.py
"""

from __future__ import annotations

import json
from typing import Any

import openai
from openai import _base_client

from toolsearch.integrations.sdk_loop import ToolSearchLoop

http = getattr(_base_client, "httpx2", None) or _base_client.httpx  # the SDK's HTTP library


def get_weather(city: str) -> str:
    """Get the weather forecast for a city."""
    return f"Sunny, 21 C in {city}"


def send_email(to: str, subject: str, body: str) -> str:
    """Send an email to a recipient."""
    return f"sent to {to}"


def create_ticket(title: str, priority: str = "normal") -> str:
    """Open a support ticket in the helpdesk."""
    return "ticket #1234"


TOOLS = {f.__name__: f for f in (get_weather, send_email, create_ticket)}


def fake_openai(request: Any) -> Any:
    """Plays the model: search, then call what the search found, then answer."""
    body = json.loads(request.content)
    offered = [t["function"]["name"] for t in body["tools"]]
    last = body["messages"][-1]
    if last["role"] == "user":
        call = {"name": "toolSearchTool", "arguments": json.dumps({"query": "weather forecast"})}
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
    elif last["role"] == "tool" and "get_weather" in offered and last["content"].startswith("["):
        call = {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    else:
        message = {"role": "assistant", "content": f"Paris: {last['content']}"}
    for i, call in enumerate(message.get("tool_calls", [])):
        message["tool_calls"][i] = {
            "id": f"call_{len(body['messages'])}",
            "type": "function",
            "function": call,
        }
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return http.Response(200, json=completion)


def main() -> None:
    client = openai.OpenAI(
        api_key="sk-test", http_client=http.Client(transport=http.MockTransport(fake_openai))
    )
    search = ToolSearchLoop(TOOLS.values())  # BM25 over the three tools, indexed once
    session = search.session("conversation-42")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": search.system_hint},
        {"role": "user", "content": "What's the weather in Paris?"},
    ]
    while True:
        tools = session.tools("openai")
        print("tools sent:", [t["function"]["name"] for t in tools])
        completion = client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, tools=tools
        )
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            print("answer:", message.content)
            break
        for call in message.tool_calls:
            result = session.openai_result(call)  # a search: its result; else None
            if result is None:  # one of your tools: run it as you always did, unless refused
                output = session.refusal(call.function.name, "openai")  # not discovered yet?
                if output is None:
                    name = session.tool_name(call.function.name, "openai")  # its own name
                    output = TOOLS[name](**json.loads(call.function.arguments))
                result = {"role": "tool", "tool_call_id": call.id, "content": output}
            print(f"{call.function.name} ->", result["content"])
            messages.append(result)
    print("discovered:", session.discovered)


if __name__ == "__main__":
    main()
