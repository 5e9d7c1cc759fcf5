"""The usage memory's document: JSON in, JSON out, bounded, mergeable.

:func:`to_document` and :func:`from_document` convert between catalogs and the versioned
JSON document every store keeps. Reading never lets a dependency's exception out: a number
out of range (``1e999``), nesting too deep for the parser, a folder at the path or a field
of the wrong type all become one :class:`~toolsearch.errors.UsageMemoryError` naming the
source. A read document is **re-bounded** by the reader's :class:`UsageParams` (requests
per tool, contributors per request, tool sets, request length), so a file written with
looser bounds, or edited, cannot grow the process past them.

:func:`merge` joins two memories' catalogs without losing either side's learning: a
request's sessions are the union (capped), its clocks the later ones, call counts the
larger. Several workers saving into one store each merge their state into what is
there, so nothing one learned is lost to another's save.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolsearch.errors import UsageMemoryError
from toolsearch.indexes.learning.model import Catalog, Entry, ToolUse, UsageParams, priority

__all__ = [
    "USAGE_FORMAT",
    "USAGE_VERSION",
    "adopt_stored",
    "dump_document",
    "from_document",
    "merge",
    "parse",
    "rebound",
    "to_document",
    "write_atomically",
]

USAGE_FORMAT = "toolsearch-usage-memory"
"""The ``format`` of a usage memory file."""
USAGE_VERSION = 1
"""The ``version`` this module writes (and the newest it reads)."""


def to_document(
    catalogs: Mapping[str, Catalog], params: UsageParams, saved: float
) -> dict[str, Any]:
    """The JSON document of ``catalogs``."""
    return {
        "format": USAGE_FORMAT,
        "version": USAGE_VERSION,
        "saved": round(saved, 3),
        "params": {k: v for k, v in _params(params).items()},
        "tool_sets": {digest: _catalog_record(c) for digest, c in catalogs.items()},
    }


def _params(params: UsageParams) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(params)


def _catalog_record(catalog: Catalog) -> dict[str, Any]:
    record: dict[str, Any] = {
        "events": catalog.events,
        "changed": catalog.changed,
        "tools": {
            name: [_entry_record(e) for e in entries.values()]
            for name, entries in catalog.tools.items()
            if entries
        },
    }
    if not catalog.serve:
        record["serve"] = False
    if catalog.fingerprints:
        record["fingerprints"] = dict(catalog.fingerprints)
    if catalog.use:
        record["use"] = {n: [u.calls, u.ok, u.last, u.at] for n, u in catalog.use.items()}
    return record


def _entry_record(entry: Entry) -> dict[str, Any]:
    record: dict[str, Any] = {
        "text": entry.text,
        "sessions": entry.sessions,
        "first": entry.first,
        "last": entry.last,
        "event": entry.event,
    }
    if not entry.text:
        record["key"] = entry.key
    if entry.terms is not None:
        record["terms"] = dict(entry.terms)
    if entry.vector is not None:
        record["vector"] = [round(x, 5) for x in entry.vector]
        record["embedder"] = entry.embedder
    return record


def parse(text: str | bytes, source: object) -> dict[str, Catalog]:
    """The catalogs of a document's text; :class:`UsageMemoryError` naming ``source`` for
    anything that is not a readable usage memory (never a parser's own exception)."""
    try:
        document = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageMemoryError(
            f"{source}: not a usage memory file (not valid JSON: {exc})"
        ) from None
    except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
        raise UsageMemoryError(
            f"{source}: not a usage memory file ({type(exc).__name__} while parsing)"
        ) from None
    return from_document(document, source)


def from_document(document: Any, source: object) -> dict[str, Catalog]:
    """The catalogs of a parsed document (typed errors only, as :func:`parse`)."""
    if not isinstance(document, dict) or document.get("format") != USAGE_FORMAT:
        raise UsageMemoryError(
            f'{source}: not a usage memory file (no "format": "{USAGE_FORMAT}"); '
            "write one with UsageMemory.save() or `toolsearch index learn`"
        )
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UsageMemoryError(f"{source}: a usage memory file without a valid version")
    if version > USAGE_VERSION:
        raise UsageMemoryError(
            f"{source}: usage memory version {version} is newer than this toolsearch reads "
            f"({USAGE_VERSION}); upgrade toolsearch"
        )
    catalogs: dict[str, Catalog] = {}
    try:
        for digest, body in dict(document["tool_sets"]).items():
            catalog = Catalog(
                events=int(_finite(body["events"])),
                changed=_finite(body.get("changed", 0.0)),
                serve=body.get("serve", True) is not False,
            )
            for name, rows in dict(body["tools"]).items():
                entries = catalog.tools.setdefault(str(name), {})
                for row in list(rows):
                    entry = _entry(row)
                    entries[_key_of(entry)] = entry
            catalog.fingerprints = {
                str(k): str(v) for k, v in dict(body.get("fingerprints") or {}).items()
            }
            for name, row in dict(body.get("use") or {}).items():
                calls, ok, last, at = (_finite(x) for x in list(row)[:4])
                catalog.use[str(name)] = ToolUse(calls, min(ok, calls), last, at)
            catalog.recount()
            catalogs[str(digest)] = catalog
    except UsageMemoryError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, RecursionError) as exc:
        raise UsageMemoryError(f"{source}: a malformed usage memory file ({exc!r})"[:500]) from None
    return catalogs


def _finite(value: Any) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"a number out of range: {value!r}")
    return number


def _entry(row: Any) -> Entry:
    if not isinstance(row, dict):
        raise TypeError("a request record is not an object")
    sessions = row["sessions"]
    if not isinstance(sessions, list):
        raise TypeError("'sessions' is not a list")
    terms = row.get("terms")
    vector = row.get("vector")
    return Entry(
        str(row["text"]),
        list(dict.fromkeys(str(s) for s in sessions)),
        _finite(row["first"]),
        _finite(row["last"]),
        int(_finite(row["event"])),
        None if terms is None else Counter({str(k): _finite(v) for k, v in dict(terms).items()}),
        None if vector is None else [_finite(x) for x in list(vector)],
        str(row.get("embedder", "")),
        str(row.get("key", "")),
    )


def _key_of(entry: Entry) -> str:
    from toolsearch.indexes.learning.model import normalize_request

    if entry.text:
        return normalize_request(entry.text)
    if not entry.key:
        raise ValueError("a request record with neither text nor key")
    return entry.key


def rebound(catalogs: dict[str, Catalog], params: UsageParams, now: float) -> dict[str, Catalog]:
    """``catalogs`` within ``params``' bounds: requests cut to ``max_request_chars``,
    contributors per request to ``max_contributors``, requests per tool to
    ``max_per_tool`` (the weakest go), tool sets to ``max_tool_sets`` (the least recently
    changed go). Mutates and returns ``catalogs``."""
    if len(catalogs) > params.max_tool_sets:
        keep = sorted(catalogs, key=lambda d: catalogs[d].changed, reverse=True)
        for digest in keep[params.max_tool_sets :]:
            del catalogs[digest]
    for catalog in catalogs.values():
        for entries in catalog.tools.values():
            for entry in entries.values():
                entry.text = entry.text[: params.max_request_chars]
                del entry.sessions[params.max_contributors :]
            if len(entries) > params.max_per_tool:
                ranked = sorted(entries, key=lambda k: priority(entries[k], catalog, params, now))
                for key in ranked[: len(entries) - params.max_per_tool]:
                    del entries[key]
        catalog.recount()
    return catalogs


def merge(into: dict[str, Catalog], other: Mapping[str, Catalog], params: UsageParams) -> None:
    """Add ``other``'s learning to ``into`` (union of sessions, later clocks, larger
    counts); re-bound it afterwards with :func:`rebound`."""
    for digest, theirs in other.items():
        mine = into.get(digest)
        if mine is None:
            into[digest] = theirs
            continue
        mine.events = max(mine.events, theirs.events)
        mine.serve = mine.serve and theirs.serve
        mine.changed = max(mine.changed, theirs.changed)
        mine.fingerprints = {**theirs.fingerprints, **mine.fingerprints}
        for name, use in theirs.use.items():
            own = mine.use.get(name)
            if own is None or use.calls > own.calls:
                last = max(use.last, own.last if own else 0.0)
                mine.use[name] = ToolUse(use.calls, use.ok, last, use.at)
        for name, entries in theirs.tools.items():
            target = mine.tools.setdefault(name, {})
            for key, entry in entries.items():
                have = target.get(key)
                if have is None:
                    target[key] = entry
                    continue
                have.sessions = list(dict.fromkeys(have.sessions + entry.sessions))[
                    : params.max_contributors
                ]
                have.first = min(have.first, entry.first)
                have.last = max(have.last, entry.last)
                have.event = max(have.event, entry.event)
                if have.vector is None and entry.vector is not None:
                    have.vector, have.embedder = entry.vector, entry.embedder
        mine.recount()


def dump_document(document: Any) -> str:
    """A usage document as compact JSON text: non-ASCII request text kept readable, unless
    a string holds a lone surrogate (a tool name or session id from a hostile client),
    which UTF-8 cannot encode: then every non-ASCII character is written as a ``\\u``
    escape, which reads back to the very same strings (the tool keeps its learning)."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(document, separators=(",", ":"))
    return text


def write_atomically(target: Path, text: str) -> None:
    """``text`` to ``target`` through a temporary file and a rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(staging, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(staging, target)
    finally:
        staging.unlink(missing_ok=True)


def adopt_stored(mine: Mapping[str, Catalog], merged: Mapping[str, Catalog], stamp: int) -> int:
    """Carry each unchanged catalog's change stamps from ``mine`` to ``merged`` and give
    the others a fresh one (from ``stamp``); returns the last stamp used."""
    for key, catalog in merged.items():
        current = mine.get(key)
        if current is not None and (current.events, current.size) == (
            catalog.events,
            catalog.size,
        ):
            catalog.version, catalog.full = current.version, current.full
            catalog.stamps = current.stamps
        else:
            stamp += 1
            catalog.version = catalog.full = stamp
    return stamp
