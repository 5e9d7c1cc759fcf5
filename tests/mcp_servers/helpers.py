"""Starting the test MCP servers: stdio configs, an HTTP server on a free port, process checks."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEMO = HERE / "demo_server.py"
TOOLS = HERE / "toolsearch_tools_server.py"
ROOT = HERE.parent.parent


def stdio(name: str, **extra: Any) -> dict[str, Any]:
    """A stdio config entry for a copy of the demo server called ``name``."""
    return {"command": sys.executable, "args": [str(DEMO), "--name", name], **extra}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen[Any], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited early with code {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listened on port {port} within {timeout} s")


@contextlib.contextmanager
def running(command: list[str], port: int) -> Iterator[subprocess.Popen[Any]]:
    """Run an HTTP server process until the block ends; wait until its port accepts."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, process)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def eventually(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def with_client(proxy: Any, scenario: Callable[[Any], Any], timeout: float = 60.0) -> Any:
    """Run ``scenario(client)`` against ``proxy``'s server in process (the SDK's own
    client), with a bound on the whole exchange."""
    import asyncio

    from mcp import Client

    async def run() -> Any:
        async with Client(proxy.build_server()) as client:
            return await scenario(client)

    return asyncio.run(asyncio.wait_for(run(), timeout))


def cli_proxy(config: Path, index: str = "regex") -> Any:
    """``toolsearch mcp proxy --config CONFIG`` as the SDK's stdio server parameters."""
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolsearch.cli", "mcp", "proxy", "--config", str(config), "--index", index],
        cwd=str(ROOT),
    )
