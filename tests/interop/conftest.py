"""The interop suite's real server: llama.cpp's OpenAI-compatible server with the packaged
Gemma 3 270M model, started once per run (see ``llama_server.py``).

The tests here are marked ``interop``, which the repository's pytest configuration
deselects by default: run the suite with ``python -m pytest -m interop tests/interop``
(docs/providers.md, "Interop with llama.cpp's server"). Without ``llama-cpp-python[server]``
or the model package the tests skip with the reason; under ``TOOLSEARCH_REQUIRE_LLAMA=1``
they fail instead. A failed test's report ends with the server log's tail.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import llama_server as servers
import pytest

_running: list[servers.LlamaServer] = []


@pytest.fixture(scope="session")
def llama() -> Iterator[servers.LlamaServer]:
    """The running server (``.base_url``, ``.api_key``, ``.model``)."""
    servers.require_packages()
    with servers.llama_server(n_ctx=4096, api_key=servers.SUITE_API_KEY) as server:
        _running.append(server)
        try:
            yield server
        finally:
            _running.remove(server)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
    report = yield
    if report.failed and _running:
        report.sections.append(("llama.cpp server log (tail)", _running[-1].log_tail()))
    return report
