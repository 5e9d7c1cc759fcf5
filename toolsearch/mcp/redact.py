"""Secrets of MCP server configs never reach a log line or an error message.

A server's command arguments (``--api-key VALUE``), environment values, HTTP header values,
URL passwords and URL query values are secrets: every text the MCP layer derives from an
exception passes :func:`scrub`, servers are described by :func:`summary` (the command's
name and how many arguments it has, or the URL without its query and password), and a
config's ``repr`` shows names, not values. Values are remembered when a provider takes
its configs (:func:`remember`), so a secret echoed back by a library's error message is
caught too, and from then on the log records of toolsearch, the MCP SDK and its HTTP
stack (which log endpoint and request URLs) are scrubbed as they are created.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from typing import Any
from urllib.parse import urlsplit

from toolsearch.urls import REDACTED, redact_url, scrub_urls

__all__ = ["REDACTED", "remember", "scrub", "summary", "url_without_secrets"]

_MIN_SECRET = 4  # shorter values (``1``, ``yes``) would blank out ordinary words

_LOCK = threading.Lock()
_SECRETS: set[str] = set()
_SECRET_FLAG = re.compile(r"key|token|secret|passw|pwd|auth|credential|bearer|cookie", re.I)


def _flag_values(args: Any) -> list[str]:
    """Values of secret-looking flags: ``--api-key VALUE`` and ``--token=VALUE``."""
    found = []
    args = list(args)
    for i, arg in enumerate(args):
        if not arg.startswith("-"):
            continue
        flag, equals, value = arg.partition("=")
        if _SECRET_FLAG.search(flag):
            if equals:
                found.append(value)
            elif i + 1 < len(args) and not args[i + 1].startswith("-"):
                found.append(args[i + 1])
    return found


def _values(config: Any) -> list[str]:
    """The values a message must never show: arguments of secret-looking flags,
    environment and header values, the URL's password and query values. (Messages never
    show a command's arguments at all; these are the ones worth catching when a library
    echoes them back.)"""
    found = _flag_values(getattr(config, "args", ()))
    found += list((getattr(config, "env", None) or {}).values())
    for value in (getattr(config, "headers", None) or {}).values():
        found += [value, *value.split()[1:]]  # "Bearer TOKEN": the token alone too
    url = getattr(config, "url", None)
    if url:
        parts = urlsplit(url)
        if parts.password:
            found.append(parts.password)
        found += [p.split("=", 1)[1] for p in parts.query.split("&") if "=" in p]
    return [v for v in found if len(v) >= _MIN_SECRET]


_SCRUBBED_LOGGERS = ("toolsearch", "mcp", "httpx", "httpcore", "httpcore2")
"""Loggers whose records are scrubbed: ours, the MCP SDK's (it logs the endpoint URL) and
its HTTP stack's (httpx logs every request URL at INFO)."""

_installed = False


def remember(config: Any) -> None:
    """Treat the secret values of ``config`` as text never to print, and scrub the log
    records of the MCP stack from now on."""
    values = _values(config)
    with _LOCK:
        _SECRETS.update(values)
    _install_record_factory()


def _install_record_factory() -> None:
    """Scrub records of :data:`_SCRUBBED_LOGGERS` as they are created (a log record
    factory is the one hook that sees every logger's records, whoever configured the
    handlers); other records pass through the previous factory untouched."""
    global _installed
    with _LOCK:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if record.name.split(".", 1)[0] in _SCRUBBED_LOGGERS:
            try:
                message = record.getMessage()
            except Exception:  # a malformed record: leave it to logging to report
                return record
            cleaned = scrub(message)
            if cleaned != message:
                record.msg, record.args = cleaned, ()
        return record

    logging.setLogRecordFactory(factory)


def scrub(text: str) -> str:
    """``text`` with every remembered secret, URL password and URL query value replaced."""
    with _LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return scrub_urls(text)


def url_without_secrets(url: str) -> str:
    """The URL with its user-info and query values replaced (names kept): toolsearch's
    one rule for URLs (:func:`toolsearch.urls.redact_url`)."""
    return redact_url(url)


def summary(config: Any) -> str:
    """How a server is described in messages: ``command npx (2 arguments)`` or its URL
    without secrets."""
    url = getattr(config, "url", None)
    if url:
        return f"url {url_without_secrets(url)}"
    args = getattr(config, "args", ())
    command = os.path.basename(str(getattr(config, "command", "?")))
    counted = f" ({len(args)} argument{'s' if len(args) != 1 else ''}, not shown)" if args else ""
    return f"command {command}{counted}"
