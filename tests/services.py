"""Real servers for the tests of the external backends: Redis and a Milvus Lite server.

``.ci/run`` starts both on free loopback ports and exports ``REDIS_URL`` / ``MILVUS_URI``;
a test run then uses those. A developer who runs ``pytest`` alone gets the same servers
started here on the first test that needs one (``redis-server`` on ``PATH``, the
``milvus-lite`` command of the ``[milvus]`` extra) and stopped when the run ends. Only when
neither a variable nor the program is there do those tests skip, with the reason; under
``TOOLSEARCH_REQUIRE_SERVICES=1`` (set by ``.ci/run``) a missing server fails them instead,
so CI never passes with the backends untested.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with code {process.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f} s")


@contextmanager
def _server(command: list[str], port: int, what: str, timeout: float = 60.0) -> Iterator[None]:
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        _wait_for_port(port, process, what, timeout)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _unavailable(reason: str) -> None:
    if os.environ.get("TOOLSEARCH_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason} (TOOLSEARCH_REQUIRE_SERVICES=1: CI must provide it)")
    pytest.skip(reason)


def redis_server() -> Callable[[], Iterator[str]]:
    """A generator factory for the ``redis_url`` session fixture."""

    def start() -> Iterator[str]:
        url = os.environ.get("REDIS_URL")
        if url:
            yield url
            return
        program = shutil.which("redis-server")
        if program is None:
            _unavailable("REDIS_URL is unset and redis-server is not installed")
        assert program is not None
        port = free_port()
        command = [program, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        with _server([*command, "--appendonly", "no"], port, "redis-server"):
            yield f"redis://127.0.0.1:{port}/0"

    return start


def milvus_server() -> Callable[[], Iterator[str]]:
    """A generator factory for the ``milvus_uri`` session fixture."""

    def start() -> Iterator[str]:
        uri = os.environ.get("MILVUS_URI")
        if uri:
            yield uri
            return
        program = shutil.which("milvus-lite") or str(Path(sys.executable).with_name("milvus-lite"))
        if not Path(program).exists():
            _unavailable("MILVUS_URI is unset and milvus-lite (extra [milvus]) is not installed")
        port = free_port()
        with tempfile.TemporaryDirectory(prefix="toolsearch-milvus-") as data:
            command = [program, "server", "--data-dir", data, "--host", "127.0.0.1"]
            with _server([*command, "--port", str(port)], port, "milvus-lite server"):
                yield f"http://127.0.0.1:{port}"

    return start
