"""One redaction rule for every URL a user gives toolsearch: what messages and logs show.

A URL's credentials are secrets wherever it came from (a Redis or Milvus URL, an MCP
server's endpoint, an embedding service): the user-info part (``user:password@``) is
replaced as a whole, and every query value (``?password=...``, ``?token=...``,
``?api_key=...``) too, names kept. :func:`redact_url` applies it to one URL a user gave;
:func:`scrub_urls` to every URL inside a text (an error message a library wrote, a log
line), in linear time whatever the text is.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["REDACTED", "redact_url", "scrub_urls"]

REDACTED = "***"

# Both patterns run in linear time on any text (a scrubbed text may be a 1 MB URI a client
# sent): a match may start only where the previous character cannot continue it (a query
# name never spans a ``?`` or ``&``; a scheme starts where no word character precedes), so
# no run of characters is rescanned from each of its positions.
_QUERY_VALUE = re.compile(r"([?&][^=&?#\s'\"]+=)[^&?#\s'\")\],;]+")
_USERINFO = re.compile(r"(?<![\w+.-])([A-Za-z][\w+.-]*://)[^/@\s'\"]+@")


def redact_url(url: str) -> str:
    """``url`` with its user-info and every query value replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL urllib can split: scrub it as text
        return scrub_urls(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = "&".join(
        f"{p.split('=', 1)[0]}={REDACTED}" if "=" in p else p for p in parts.query.split("&") if p
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def scrub_urls(text: str) -> str:
    """``text`` with the user-info and query values of every URL in it replaced."""
    text = _USERINFO.sub(rf"\1{REDACTED}@", text)
    return _QUERY_VALUE.sub(rf"\1{REDACTED}", text)
