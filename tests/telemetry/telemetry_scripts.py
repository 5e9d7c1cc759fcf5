"""Scripted models and tools the telemetry tests share.

The model decides only from what it receives: it searches when it sees the search tool and
no forecast tool, calls ``get_forecast`` once it sees it, and answers from the tool result.
The texts are distinctive so a test can look for them in every attribute and event.
"""

from __future__ import annotations

import json

from toolsearch import AssistantMessage, ToolCall, ToolResponseMessage, tool

CITY = "Zanzibar-Argument-7731"
RESULT = "Result-Text-Sunny-4410"
QUERY = "Query-Text-weather-forecast-9182"
USER = "User-Content-Paris-5521"
ANSWER = "Answer-Content-Done-3307"
SECRETS = (CITY, RESULT, QUERY, USER, ANSWER)


@tool(description="Get the weather forecast for a city")
def get_forecast(city: str) -> str:
    return f"{RESULT} for {city}"


@tool(description="Send an email to someone")
def send_email(to: str, body: str) -> str:
    return "sent"


@tool(description="Get the weather forecast for a city (broken)")
def broken_forecast(city: str) -> str:
    raise ValueError(f"no station near {city}")


def script(messages, tools):
    names = [t.name for t in tools]
    last = messages[-1]
    if isinstance(last, ToolResponseMessage):
        response = last.responses[0]
        if response.name == "toolSearchTool":
            found = json.loads(response.response_data)
            target = found[0] if found else "get_forecast"
            return AssistantMessage(
                tool_calls=[
                    ToolCall(id="call-2", name=target, arguments=json.dumps({"city": CITY}))
                ]
            )
        return ANSWER
    if "toolSearchTool" in names and not any("forecast" in n for n in names):
        query = json.dumps({"query": f"{QUERY} weather forecast city"})
        return AssistantMessage(
            tool_calls=[ToolCall(id="call-1", name="toolSearchTool", arguments=query)]
        )
    forecast = next((n for n in names if "forecast" in n), None)
    if forecast is None:
        return ANSWER
    return AssistantMessage(
        tool_calls=[ToolCall(id="call-1", name=forecast, arguments=json.dumps({"city": CITY}))]
    )
