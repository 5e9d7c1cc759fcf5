"""A toolsearch MCP server whose tools carry MCP metadata: a title, annotations and an
output schema (a pydantic result), served over stdio with ``serve_tools``."""

from __future__ import annotations

from pydantic import BaseModel

from toolsearch import tool
from toolsearch.mcp import serve_tools
from toolsearch.tools import ToolAnnotations


class FileInfo(BaseModel):
    path: str
    size: int
    lines: list[str]


@tool(
    name="files.read",
    title="Read a file",
    annotations=ToolAnnotations(read_only=True, idempotent=True, open_world=False),
)
def read_file(path: str) -> FileInfo:
    """Read a text file and return its lines."""
    return FileInfo(path=path, size=11, lines=["hello", "world"])


@tool(annotations=ToolAnnotations(destructive=True))
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


if __name__ == "__main__":
    serve_tools(read_file, delete_file, name="files")
