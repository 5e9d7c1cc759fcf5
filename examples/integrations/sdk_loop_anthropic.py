"""A hand-written Anthropic Messages loop with toolsearch's tool search.

Two lines are toolsearch's: ``session.tools("anthropic")`` (the tools to send on this turn)
and ``session.anthropic_result`` (the ``tool_result`` block of a search call). The model is
stubbed with the SDK's own mock transport, so this runs offline.

Run: python examples/integrations/sdk_loop_anthropic.py
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
from anthropic import _base_client

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


def fake_anthropic(request: Any) -> Any:
    """Plays the model: search, then call what the search found, then answer."""
    body = json.loads(request.content)
    offered = [t["name"] for t in body["tools"]]
    last = body["messages"][-1]["content"]
    result = last[0] if isinstance(last, list) and last[0].get("type") == "tool_result" else None
    turn = len(body["messages"])
    if result is None:
        content = [
            {
                "type": "tool_use",
                "id": f"toolu_{turn}",
                "name": "toolSearchTool",
                "input": {"query": "send an email"},
            }
        ]
    elif "send_email" in offered and result["content"].startswith("["):
        content = [
            {
                "type": "tool_use",
                "id": f"toolu_{turn}",
                "name": "send_email",
                "input": {"to": "ana@example.com", "subject": "Hi", "body": "Lunch?"},
            }
        ]
    else:
        content = [{"type": "text", "text": f"Done: {result['content']}"}]
    message = {
        "id": f"msg_{turn}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return http.Response(200, json=message)


def main() -> None:
    client = anthropic.Anthropic(
        api_key="sk-ant-test",
        http_client=http.Client(transport=http.MockTransport(fake_anthropic)),
    )
    search = ToolSearchLoop(TOOLS.values())
    session = search.session("conversation-7")
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Email Ana about lunch."}]
    while True:
        tools = session.tools("anthropic")
        print("tools sent:", [t["name"] for t in tools])
        reply = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=1024,
            system=search.system_hint,
            messages=messages,
            tools=tools,
        )
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            print("answer:", reply.content[0].text)
            break
        results = []
        for block in uses:
            result = session.anthropic_result(block)  # a search: its tool_result; else None
            if result is None:  # one of your tools: run it as you always did
                output = TOOLS[block.name](**block.input)
                result = {"type": "tool_result", "tool_use_id": block.id, "content": output}
            print(f"{block.name} ->", result["content"])
            results.append(result)
        messages.append({"role": "user", "content": results})
    print("discovered:", session.discovered)


if __name__ == "__main__":
    main()
