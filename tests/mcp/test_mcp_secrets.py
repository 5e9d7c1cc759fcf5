"""Secrets of MCP server configs never reach logs, error messages or reprs.

Every value that can carry a secret (command arguments, environment values, HTTP header
values, the URL's password and query values) is a marker; servers that cannot start or be
reached are connected with every failure path, and no marker may appear in any log record,
exception message, failure text or repr.
"""

from __future__ import annotations

import logging
import socket

import pytest

pytest.importorskip("mcp", reason="toolsearch[mcp] is not installed (mcp)")

from toolsearch.errors import McpConnectionError
from toolsearch.mcp import McpToolProvider
from toolsearch.mcp.config import HttpServerConfig, StdioServerConfig
from toolsearch.mcp.redact import scrub, summary, url_without_secrets

MARKERS = [f"SECRET{n}MARKER" for n in range(8)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _servers() -> dict[str, object]:
    port = _free_port()  # nothing listens there
    return {
        "stdio": {
            "command": "/nonexistent/mcp-server",
            "args": ["--api-key", MARKERS[1], f"--token={MARKERS[2]}", MARKERS[0]],
            "env": {"API_TOKEN": MARKERS[3]},
            "connect_timeout": 5,
        },
        "http": {
            "transport": "http",
            "url": f"http://user:{MARKERS[4]}@127.0.0.1:{port}/mcp?token={MARKERS[5]}&x=1",
            "headers": {"Authorization": f"Bearer {MARKERS[6]}"},
            "connect_timeout": 5,
        },
    }


def _leaks(text: str) -> list[str]:
    return [m for m in MARKERS if m in text]


def test_unreachable_servers_leak_nothing_into_logs_or_errors(caplog) -> None:
    caplog.set_level(logging.DEBUG)
    provider = McpToolProvider(_servers(), on_connect_error="skip")
    try:
        provider.connect()
        texts = [*provider.failures.values(), repr(provider)]
    finally:
        provider.close()
    texts += [record.getMessage() for record in caplog.records]
    texts += [str(record.exc_info[1]) for record in caplog.records if record.exc_info]
    assert set(provider.failures) == {"stdio", "http"}
    assert not _leaks("\n".join(texts)), "\n".join(texts)

    strict = McpToolProvider(_servers())
    with pytest.raises(McpConnectionError) as caught:
        strict.connect()
    strict.close()
    assert not _leaks(str(caught.value))


def test_config_reprs_and_summaries_show_names_not_values() -> None:
    stdio = StdioServerConfig(**_servers()["stdio"])  # type: ignore[arg-type]
    http = HttpServerConfig(**_servers()["http"])  # type: ignore[arg-type]
    for config in (stdio, http):
        assert not _leaks(repr(config) + summary(config))
    assert "API_TOKEN" in repr(stdio)
    assert "Authorization" in repr(http)
    assert "token=***" in url_without_secrets(http.url)


def test_scrub_replaces_query_values_and_passwords_in_any_text() -> None:
    text = "GET https://bob:hunter22@api.example.com/v1?key=abc123&page=2 failed"
    assert scrub(text) == "GET https://***@api.example.com/v1?key=***&page=*** failed"


@pytest.mark.parametrize(
    "text",
    [
        "a" * 1_000_000,  # a run of word characters: the URL-userinfo pattern's worst case
        "?a" * 500_000,  # query-looking pieces without a value
        "&b=" * 300_000,
        "x://" + "a" * 1_000_000,
        "a." * 500_000,
    ],
    ids=["word-run", "question-marks", "ampersands", "scheme-then-run", "dotted-run"],
)
def test_the_scrubber_is_linear_on_hostile_text(text: str) -> None:
    """A 1 MB URI or prompt name that a client sends passes the scrubber behind every
    error and log record: before, a run of word characters took quadratic time (11 s for
    100,000 characters, over 6 minutes for 1 MB) and blocked every client of the proxy.
    The guard is a hang guard, not a speed limit: a linear scrub takes milliseconds."""
    import threading

    from toolsearch.mcp.redact import scrub

    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(scrub(text)), daemon=True)
    worker.start()
    worker.join(60)
    assert out, "scrub did not finish"
    assert len(out[0]) <= len(text)


def test_the_linear_scrubber_still_redacts_urls() -> None:
    from toolsearch.mcp.redact import scrub

    text = "GET https://bob:hunter22@api.example.com/v1?token=abc123&page=2 failed"
    assert scrub(text) == "GET https://***@api.example.com/v1?token=***&page=*** failed"
    assert scrub("redis+tls://u:p@h:1/0") == "redis+tls://***@h:1/0"
