"""toolsearch ``@tool`` functions served over MCP with ``serve_tools`` (stdio or ``--http``)."""

from __future__ import annotations

import argparse
from typing import Annotated

from toolsearch import ToolContext, ToolParam, tool
from toolsearch.mcp import serve_tools


class Alarms:
    @tool(description="Set a user alarm for the given time, provided in ISO-8601 format")
    def set_alarm(
        self, time: Annotated[str, ToolParam(description="Time in ISO-8601 format")]
    ) -> str:
        return f"alarm set for {time}"


@tool
def multiply(a: int, b: int = 2) -> int:
    """Multiply two integers."""
    return a * b


@tool
def whose(context: ToolContext) -> str:
    """Who the server runs for (from its tool context)."""
    return str(context.get("user", "nobody"))


@tool
def explode(reason: str) -> str:
    """Always raises."""
    raise RuntimeError(f"exploded: {reason}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None)
    args = parser.parse_args()
    tools = [Alarms(), multiply, whose, explode]
    if args.http is None:
        serve_tools(*tools, name="alarm-tools", tool_context={"user": "ada"})
    else:
        serve_tools(*tools, name="alarm-tools", transport="http", port=args.http)


if __name__ == "__main__":
    main()
