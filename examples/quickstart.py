"""Quick start: a tool loop on a scripted, offline model (no API key needed).

Run: python examples/quickstart.py
"""

import json
from datetime import datetime, timedelta
from typing import Annotated

from toolsearch import (
    AssistantMessage,
    ChatClient,
    ToolCall,
    ToolParam,
    ToolResponseMessage,
    UserMessage,
    tool,
)
from toolsearch.models import FunctionChatModel

NOW = datetime(2026, 11, 30, 9, 0, 0)


class DateTimeTools:
    @tool(description="Get the current date and time in the user's timezone")
    def get_current_date_time(self) -> str:
        return NOW.isoformat()

    @tool(description="Set a user alarm for the given time, provided in ISO-8601 format")
    def set_alarm(
        self, time: Annotated[str, ToolParam(description="Time in ISO-8601 format")]
    ) -> str:
        return f"Alarm set for {time}"


def script(messages, tools):
    """Stands in for an LLM: asks for the time, sets the alarm, then answers."""
    last = messages[-1]
    if isinstance(last, UserMessage):
        return AssistantMessage(tool_calls=[ToolCall(id="1", name="get_current_date_time")])
    result = last.responses[0] if isinstance(last, ToolResponseMessage) else None
    if result is not None and result.name == "get_current_date_time":
        alarm = datetime.fromisoformat(result.response_data) + timedelta(minutes=10)
        arguments = json.dumps({"time": alarm.isoformat()})
        return AssistantMessage(
            tool_calls=[ToolCall(id="2", name="set_alarm", arguments=arguments)]
        )
    return f"Done: {result.response_data if result else 'nothing to do'}."


model = FunctionChatModel(script)
answer = (
    ChatClient.create(model)
    .prompt("Can you set an alarm 10 minutes from now?")
    .tools(DateTimeTools())
    .call()
    .content()
)
print(answer)  # Done: Alarm set for 2026-11-30T09:10:00.
