"""MCP client, server and tool-search proxy (``toolsearch[mcp]``)."""

__all__: list[str] = []
