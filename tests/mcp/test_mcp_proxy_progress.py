"""Progress notifications of an upstream tool reach the proxy's client during ``call_tool``:
the same progress, total and message, in order, all before the result. In-process through
the SDK's client, and as ``python -m toolsearch.cli mcp proxy`` over stdio and streamable
HTTP (where progress travels as JSON-RPC notifications for the client's progress token).
The upstream server is a real subprocess (``passthrough_server.py``'s ``count_up``)."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp_servers.helpers import HERE, cli_proxy, free_port, running, with_client

from toolsearch._async import LoopThread
from toolsearch.mcp import McpSearchProxy, McpToolProvider
from toolsearch.mcp.progress import ProgressRelay, request_progress

PASSTHROUGH = HERE / "passthrough_server.py"
STEPS = [(1.0, 3.0, "step 1 of 3"), (2.0, 3.0, "step 2 of 3"), (3.0, 3.0, "step 3 of 3")]


@pytest.fixture(scope="module")
def proxy():
    servers = {"counter": {"command": sys.executable, "args": [str(PASSTHROUGH)]}}
    with McpToolProvider(servers) as provider:
        yield McpSearchProxy(provider, index="regex")


async def count_up(client: Client, arguments: dict | None = None):
    """Call ``count_up`` through the proxy with a progress callback: (result, updates)."""
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    result = await client.call_tool(
        "call_tool",
        {"name": "count_up", "arguments": arguments or {}},
        progress_callback=on_progress,
    )
    return result, list(updates)  # what had arrived when the result did


def test_the_upstream_progress_reaches_the_client_before_the_result(proxy):
    result, updates = with_client(proxy, count_up)
    assert not result.is_error
    assert result.content[0].text == "counted to 3"
    assert updates == STEPS


def test_every_update_of_a_longer_call_arrives_in_order(proxy):
    result, updates = with_client(proxy, lambda client: count_up(client, {"steps": 40}))
    assert result.content[0].text == "counted to 40"
    assert updates == [(float(i), 40.0, f"step {i} of 40") for i in range(1, 41)]


def test_a_call_without_a_progress_callback_just_answers(proxy):
    async def scenario(client):
        return await client.call_tool("call_tool", {"name": "count_up", "arguments": {}})

    assert with_client(proxy, scenario).content[0].text == "counted to 3"


def write_config(tmp_path: Path) -> Path:
    config = tmp_path / "servers.toml"
    config.write_text(
        "\n".join(
            [
                "[servers.counter]",
                f"command = {json.dumps(sys.executable)}",
                f"args = [{json.dumps(str(PASSTHROUGH))}]",
                "",
            ]
        )
    )
    return config


def test_the_command_line_proxy_forwards_progress_over_stdio(tmp_path):
    config = write_config(tmp_path)
    command = cli_proxy(config)

    async def run():
        async with Client(command, read_timeout_seconds=30) as client:
            return await count_up(client)

    result, updates = asyncio.run(asyncio.wait_for(run(), 60))
    assert result.content[0].text == "counted to 3"
    assert updates == STEPS


def test_the_command_line_proxy_forwards_progress_over_streamable_http(tmp_path):
    config = write_config(tmp_path)
    port = free_port()
    command = [
        sys.executable, "-m", "toolsearch.cli", "mcp", "proxy", "--config", str(config),
        "--index", "regex", "--transport", "http", "--port", str(port),
    ]  # fmt: skip

    async def run():
        async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=30) as client:
            return await count_up(client)

    with running(command, port):
        result, updates = asyncio.run(asyncio.wait_for(run(), 60))
    assert result.content[0].text == "counted to 3"
    assert updates == STEPS


# -- the relay, without servers --------------------------------------------------------------


def test_the_relay_hands_updates_from_another_thread_over_in_order():
    """Updates queued on another loop's thread are sent on this loop, in order, all before
    the block ends (as the provider's loop thread hands them to the serving loop)."""
    sent: list[tuple[float, float | None, str | None]] = []
    threads: set[str] = set()

    async def report(progress: float, total: float | None, message: str | None) -> None:
        threads.add(threading.current_thread().name)
        await asyncio.sleep(0)  # a send that yields, as a stream write does
        sent.append((progress, total, message))

    async def upstream(relay: ProgressRelay) -> None:
        for i in range(100):
            await relay.on_progress(float(i), 100.0, f"update {i}")

    async def run() -> int:
        with LoopThread("upstream-loop") as other:
            async with ProgressRelay(report) as relay:
                await other.run_async(upstream(relay))
            return relay.sent

    count = asyncio.run(run())
    assert count == 100
    assert sent == [(float(i), 100.0, f"update {i}") for i in range(100)]
    assert threads == {threading.current_thread().name}


def test_a_failing_report_is_not_the_calls_failure():
    async def report(progress: float, total: float | None, message: str | None) -> None:
        raise ConnectionError("the client left")

    async def run() -> int:
        async with ProgressRelay(report) as relay:
            await relay.on_progress(1.0, None, None)
        return relay.sent

    assert asyncio.run(run()) == 0


def test_no_reporter_outside_a_call():
    assert request_progress() is None
