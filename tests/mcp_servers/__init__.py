"""Small MCP servers the MCP tests start as subprocesses."""
