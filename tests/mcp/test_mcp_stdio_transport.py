"""The stdio transport: lines split in one pass, a cap on one message, and a real server
whose answer is over the cap failing only that call, at once."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp")

from mcp_servers.helpers import stdio, with_client

from toolsearch.errors import McpConfigError
from toolsearch.mcp import McpSearchProxy, McpToolProvider
from toolsearch.mcp.config import load_mcp_config
from toolsearch.mcp.stdio import LineReader, Oversized


def feed_all(reader: LineReader, data: bytes, chunk: int) -> list[bytes | Oversized]:
    lines: list[bytes | Oversized] = []
    for start in range(0, len(data), chunk):
        lines.extend(reader.feed(data[start : start + chunk]))
    return lines


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 10_000])
def test_lines_come_out_whole_whatever_the_chunks(chunk) -> None:
    data = b'{"a":1}\n\n{"b":"x y"}\n{"c":[1,2]}\npartial'
    reader = LineReader(1024)
    assert feed_all(reader, data, chunk) == [b'{"a":1}', b"", b'{"b":"x y"}', b'{"c":[1,2]}']
    assert reader.feed(b"\n") == [b"partial"]


def test_an_oversized_line_keeps_only_its_ends_and_the_next_line_is_whole() -> None:
    limit = 64 * 1024
    body = b'{"jsonrpc":"2.0","id":7,"result":{"text":"' + b"x" * 2_000_000 + b'"}}'
    reader = LineReader(limit)
    held = []
    lines: list[bytes | Oversized] = []
    for start in range(0, len(body), 65_536):
        lines.extend(reader.feed(body[start : start + 65_536]))
        held.append(reader.buffered)
    assert max(held) <= limit + 65_536 + 2 * 4096
    lines.extend(reader.feed(b'\n{"jsonrpc":"2.0","id":8,"result":{}}\n'))
    big, after = lines
    assert isinstance(big, Oversized)
    assert big.size == len(body)
    assert big.request_id() == 7
    assert after == b'{"jsonrpc":"2.0","id":8,"result":{}}'


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":"req-1","result":{"t":"' + b"x" * 9000 + b'"}}', "req-1"),
        # the TypeScript SDK writes the id last
        (b'{"result":{"t":"' + b"x" * 9000 + b'"},"jsonrpc":"2.0","id":12}', 12),
        (b'{"result":{"t":"' + b"x" * 9000 + b'"},"id":3,"jsonrpc":"2.0"}', 3),
        # a notification: nothing waits for it
        (
            b'{"jsonrpc":"2.0","method":"notifications/message","params":{"d":"'
            + b"x" * 9000
            + b'"}}',
            None,
        ),
    ],
)
def test_the_request_id_of_an_oversized_line(line, expected) -> None:
    reader = LineReader(2048)
    (found,) = reader.feed(line + b"\n")
    assert isinstance(found, Oversized)
    assert found.request_id() == expected


def test_max_message_bytes_is_a_server_setting() -> None:
    config = load_mcp_config(
        {"mcpServers": {"a": {"command": "python", "max_message_bytes": 65536}}}
    )
    assert config.servers["a"].max_message_bytes == 65536
    assert load_mcp_config({"mcpServers": {"a": {"command": "x"}}}).servers["a"].max_message_bytes
    with pytest.raises(McpConfigError, match="max_message_bytes"):
        load_mcp_config({"mcpServers": {"a": {"command": "x", "max_message_bytes": 10}}})


def test_an_answer_over_the_cap_fails_its_call_and_the_server_goes_on() -> None:
    """A tool whose answer is over the server's ``max_message_bytes`` fails with an error
    naming the limit (not a timeout), and the next calls on that server are answered."""
    provider = McpToolProvider({"alpha": stdio("alpha", max_message_bytes=256 * 1024)})
    with provider:
        proxy = McpSearchProxy(provider, index="bm25")

        async def scenario(client):
            big = await client.call_tool(
                "call_tool", {"name": "big", "arguments": {"megabytes": 2}}
            )
            small = await client.call_tool(
                "call_tool", {"name": "big", "arguments": {"megabytes": 0.05}}
            )
            add = await client.call_tool(
                "call_tool", {"name": "add", "arguments": {"a": 2, "b": 3}}
            )
            found = await client.call_tool("search_tools", {"query": "add two integers"})
            return big, small, add, found

        big, small, add, found = with_client(proxy, scenario)
    assert big.is_error
    text = big.content[0].text
    assert "over the limit of 0.3 MB" in text
    assert "max_message_bytes" in text
    assert not small.is_error
    assert len(small.content[0].text) == 50_000
    assert add.content[0].text == "5"
    assert "add" in [t["name"] for t in json.loads(found.content[0].text)["tools"]]
