"""A hand-written Gemini (google-genai) loop with toolsearch's tool search.

Two lines are toolsearch's: ``session.tools("gemini")`` (the tools to send on this turn)
and ``session.gemini_result`` (the ``function_response`` part of a search call). The model
is stubbed with the HTTP library's mock transport given to the SDK, so this runs offline.

Run: python examples/integrations/sdk_loop_gemini.py
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from google import genai
from google.genai import types

from toolsearch.integrations.sdk_loop import ToolSearchLoop

try:  # the HTTP library google-genai is built on
    http: Any = importlib.import_module("httpx2")
except ImportError:  # pragma: no cover - older SDK stacks
    http = importlib.import_module("httpx")


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


def fake_gemini(request: Any) -> Any:
    """Plays the model: search, then call what the search found, then answer."""
    body = json.loads(request.content)
    offered = [d["name"] for t in body["tools"] for d in t["functionDeclarations"]]
    part = body["contents"][-1]["parts"][0]
    output = part.get("functionResponse", {}).get("response", {}).get("output")
    if output is None:
        reply = {"functionCall": {"name": "toolSearchTool", "args": {"query": "open a ticket"}}}
    elif "create_ticket" in offered and output.startswith("["):
        reply = {"functionCall": {"name": "create_ticket", "args": {"title": "VPN is down"}}}
    else:
        reply = {"text": f"Opened {output}."}
    answer = {
        "candidates": [{"content": {"role": "model", "parts": [reply]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
    }
    return http.Response(200, json=answer)


def main() -> None:
    client = genai.Client(
        api_key="gemini-test-key",
        http_options=types.HttpOptions(
            httpx_client=http.Client(transport=http.MockTransport(fake_gemini))
        ),
    )
    search = ToolSearchLoop(TOOLS.values())
    session = search.session("conversation-9")
    contents: list[Any] = [
        types.Content(role="user", parts=[types.Part(text="The VPN is down, open a ticket.")])
    ]
    while True:
        tools = session.tools("gemini")
        print("tools sent:", [d["name"] for t in tools for d in t["function_declarations"]])
        response = client.models.generate_content(
            model="gemini-2.5-flash",
            contents=contents,
            config=types.GenerateContentConfig(system_instruction=search.system_hint, tools=tools),
        )
        content = response.candidates[0].content
        contents.append(content)
        calls = [p.function_call for p in content.parts if p.function_call]
        if not calls:
            print("answer:", response.text)
            break
        parts = []
        for call in calls:
            part = session.gemini_result(call)  # a search: its function_response; else None
            if part is None:  # one of your tools: run it as you always did
                output = TOOLS[call.name](**call.args)
                part = {"function_response": {"name": call.name, "response": {"output": output}}}
            print(f"{call.name} ->", part["function_response"]["response"]["output"])
            parts.append(part)
        contents.append(types.Content(role="user", parts=parts))
    print("discovered:", session.discovered)


if __name__ == "__main__":
    main()
