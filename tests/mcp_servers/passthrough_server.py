"""An MCPServer with prompts, resources and a progress-reporting tool, for the proxy tests.

``python passthrough_server.py [--name NAME] [--broken]`` serves over stdio. ``--name``
changes the server name and the text it answers with, so tests can tell two copies apart;
``--broken`` makes its prompt, resource and template lists fail (it still advertises
them), so tests see a server whose listing fails. Both copies
offer the prompt ``greet`` (a name clash, so the proxy prefixes it) and the same resource
URIs (which the proxy tells apart by their rewritten form), and each offers one prompt of
its own (``about_<name>``, which keeps its name).

- prompt ``greet(person, tone="warm")``: one user message naming both arguments;
- resource ``demo://readme`` (text), ``demo://logo.png`` (bytes, so a blob);
- resource template ``greeting://{who}``: ``hello <who> from <name>``;
- tool ``count_up(steps=3)``: reports ``steps`` progress notifications (``i`` of
  ``steps``, message ``step i of steps``), then answers ``counted to <steps>``.
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

LOGO = bytes(range(16))
"""The bytes of ``demo://logo.png`` (not a real PNG: any bytes make a blob)."""


def build(name: str, broken: bool = False) -> MCPServer:
    server = MCPServer(name, log_level="WARNING")
    if broken:

        async def refuse() -> list:
            raise MCPError(-32603, f"{name} cannot list anything today")

        server.list_prompts = refuse  # what its prompts/list, resources/list... handlers call
        server.list_resources = refuse
        server.list_resource_templates = refuse

    @server.prompt(description="Greet someone in the given tone.")
    def greet(person: str, tone: str = "warm") -> str:
        return f"Write a {tone} greeting for {person}, signed {name}."

    def about() -> str:
        return f"Tell me about the server {name}."

    server.prompt(name=f"about_{name}", description=f"About the server {name}.")(about)

    @server.resource("demo://readme", mime_type="text/plain", description="The readme.")
    def readme() -> str:
        return f"readme of {name}"

    @server.resource("demo://logo.png", mime_type="image/png", description="A logo.")
    def logo() -> bytes:
        return LOGO

    @server.resource("greeting://{who}", mime_type="text/plain", description="A greeting.")
    def greeting(who: str) -> str:
        return f"hello {who} from {name}"

    @server.tool()
    async def count_up(ctx: Context, steps: int = 3) -> str:
        """Count to ``steps``, reporting progress at every step."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
        return f"counted to {steps}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="passthrough")
    parser.add_argument("--broken", action="store_true")
    args = parser.parse_args()
    build(args.name, args.broken).run()


if __name__ == "__main__":
    main()
