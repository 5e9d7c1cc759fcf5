"""Search logs: what each tool search was asked, what it returned, and what the model called.

A :class:`SearchLog` is a sink on the tool-search advisor
(``ToolSearchToolCallingAdvisor(search_log=...)``). The advisor hands it a
:class:`LoggedSearch` after every search and a :class:`LoggedCalls` for every turn in which
the model called tools. The two are joined later, by session and order: a search's
*labels* are the tools among its hits that the model then called in that session
(:func:`~toolsearch.search.logs.reader.read_search_log`). Those labels score any
index on real traffic (``toolsearch bench --replay LOG``) and train the embedder
(``toolsearch embedder finetune --search-log LOG``).

:class:`JsonlSearchLog` is the file sink: append-only JSON lines, one per search, one per
turn with tool calls, and once per tool set the tool definitions (so a replay can rebuild
the catalog). Sessions are hashed (:func:`~toolsearch.observe.hash_session_id`), but
**the query text is user content** and is written as the model sent it: a log is only
kept when you pass a path, and it should be stored like any other user data.

Other sinks (a database, a queue) implement the two methods of :class:`SearchLog`;
:meth:`LoggedSearch.to_record` and :meth:`LoggedCalls.to_record` give the JSON objects
the file holds (``from_record`` reads them back; :func:`iter_search_log` replays a file as
those objects, in order). :class:`TeeSearchLog` hands every record to several sinks (a
file and a :class:`~toolsearch.indexes.learning.memory.UsageMemory`, say).

Whether a called tool *succeeded* (ran and returned, rather than raising or being refused)
is recorded since the tool-search advisor writes a turn's calls after they ran: the
``calls`` record's ``ok`` list, one flag per name. Lines without it (older logs, front
doors that record a call before it runs) read as "not recorded" (``ok`` is ``None``).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Protocol, runtime_checkable

from toolsearch.observe import hash_session_id
from toolsearch.search.events import ToolSearchEvent
from toolsearch.search.session_ref import EPHEMERAL_PREFIX
from toolsearch.search.types import MAX_QUERY_LENGTH
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "SEARCH_LOG_VERSION",
    "JsonlSearchLog",
    "LoggedCalls",
    "LoggedSearch",
    "SearchLog",
    "TeeSearchLog",
]

_log = logging.getLogger(__name__)

SEARCH_LOG_VERSION = 1
"""The ``v`` of every line :class:`JsonlSearchLog` writes."""


def is_anonymous(session_id: str) -> bool:
    """Whether a session id is a throwaway one (the request had no conversation id)."""
    return session_id.startswith(EPHEMERAL_PREFIX)


def tool_set_digest(index_key: str) -> str:
    """The tool-set digest of an index key (``session#digest``), or the key itself."""
    return index_key.rsplit("#", 1)[-1] if "#" in index_key else index_key


@dataclass(frozen=True)
class LoggedSearch:
    """One search, as a search log receives it.

    ``session`` is the hashed session id, ``tool_set`` the digest of the request's tool
    set (the tail of the index key), ``hits`` the names the model was shown with their
    scores, best first, and ``loaded`` the tools the model already had, which the search
    left out. ``tools`` is the request's whole tool set (the definitions); a sink may keep
    it once per ``tool_set``, or ignore it. ``anonymous``: the request had no conversation
    id (a throwaway session), so a sink that counts contributors counts all such requests
    as one.
    """

    time: float
    session: str
    tool_set: str
    query: str
    index: str
    search_type: str
    limit: int
    hits: tuple[tuple[str, float | None], ...]
    total_matches: int
    loaded: tuple[str, ...] = ()
    visible_tools: int | None = None
    duration_ms: float = 0.0
    error: str | None = None
    tools: Sequence[ToolDefinition] = field(default=(), repr=False, compare=False)
    anonymous: bool = False
    request: str | None = None
    """The user's request of the turn that made this search, when the front door knows
    it (a usage memory learns it beside the query; the file log writes it as
    ``request``, user content like the query)."""

    @classmethod
    def from_event(
        cls,
        event: ToolSearchEvent,
        *,
        tools: Sequence[ToolDefinition] = (),
        loaded: Iterable[str] = (),
        request: str | None = None,
    ) -> LoggedSearch:
        return cls(
            time=event.timestamp,
            session=event.session_hash,
            tool_set=tool_set_digest(event.index_key),
            query=event.query,
            index=event.index,
            search_type=event.search_type,
            limit=event.limit,
            hits=tuple((hit.name, hit.score) for hit in event.hits),
            total_matches=event.total_matches,
            loaded=tuple(loaded),
            visible_tools=event.visible_tools,
            duration_ms=event.duration_ms,
            error=event.error,
            tools=tuple(tools),
            anonymous=is_anonymous(event.session_id),
            request=request,
        )

    @property
    def hit_names(self) -> list[str]:
        return [name for name, _ in self.hits]

    def to_record(self) -> dict[str, Any]:
        """The JSON object of this search (the tool definitions are not in it)."""
        record: dict[str, Any] = {
            "v": SEARCH_LOG_VERSION,
            "type": "search",
            "time": round(self.time, 6),
            "session": self.session,
            "tool_set": self.tool_set,
            "index": self.index,
            "search_type": self.search_type,
            "query": self.query[:MAX_QUERY_LENGTH],  # what the index read of it
            "limit": self.limit,
            "hits": [
                {"name": name, "score": None if score is None else round(float(score), 6)}
                for name, score in self.hits
            ],
            "total_matches": self.total_matches,
            "loaded": list(self.loaded),
            "visible_tools": self.visible_tools,
            "duration_ms": round(self.duration_ms, 3),
        }
        if self.error is not None:
            record["error"] = self.error
        if self.anonymous:
            record["anon"] = True
        if self.request:
            record["request"] = self.request[:MAX_QUERY_LENGTH]
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> LoggedSearch:
        """The search a ``search`` record holds (:meth:`to_record`'s inverse, without the
        tool definitions); ``KeyError`` / ``TypeError`` / ``ValueError`` for a malformed
        one."""
        return cls(
            time=float(record.get("time", 0.0)),
            session=str(record["session"]),
            tool_set=str(record["tool_set"]),
            query=str(record["query"]),
            index=str(record.get("index", "")),
            search_type=str(record.get("search_type", "")),
            limit=int(record.get("limit") or 0),
            hits=tuple(
                (str(h["name"]), None if h.get("score") is None else float(h["score"]))
                for h in record["hits"]
            ),
            total_matches=int(record.get("total_matches") or 0),
            loaded=tuple(str(n) for n in record.get("loaded") or ()),
            visible_tools=record.get("visible_tools"),
            duration_ms=float(record.get("duration_ms") or 0.0),
            error=record.get("error") or None,
            anonymous=record.get("anon") is True,
            request=str(record["request"]) if record.get("request") else None,
        )


@dataclass(frozen=True)
class LoggedCalls:
    """The tools the model called on one turn of a session (the search tool left out).

    ``ok``, one flag per name, says whether that call succeeded: its tool ran and returned
    (a tool that raised, arguments that did not fit its schema, or a call refused by a
    limit is ``False``). ``None``: not recorded (a log line written before outcomes were,
    or a front door that records a call before it runs). A sink that learns from use
    counts only ``True`` (:attr:`succeeded`).
    """

    time: float
    session: str
    tool_set: str
    names: tuple[str, ...]
    ok: tuple[bool, ...] | None = None
    anonymous: bool = False
    """The session had no conversation id (see :attr:`LoggedSearch.anonymous`)."""

    def __post_init__(self) -> None:
        if self.ok is not None and len(self.ok) != len(self.names):
            raise ValueError(f"ok has {len(self.ok)} flags for {len(self.names)} names")

    @classmethod
    def of(
        cls,
        session_id: str,
        index_key: str,
        names: Iterable[str],
        time: float,
        ok: Iterable[bool] | None = None,
    ) -> LoggedCalls:
        return cls(
            time,
            hash_session_id(session_id),
            tool_set_digest(index_key),
            tuple(names),
            None if ok is None else tuple(bool(flag) for flag in ok),
            is_anonymous(session_id),
        )

    @property
    def succeeded(self) -> tuple[str, ...]:
        """The names whose call is recorded as a success (none when ``ok`` is ``None``)."""
        if self.ok is None:
            return ()
        return tuple(name for name, flag in zip(self.names, self.ok, strict=True) if flag)

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "v": SEARCH_LOG_VERSION,
            "type": "calls",
            "time": round(self.time, 6),
            "session": self.session,
            "tool_set": self.tool_set,
            "names": list(self.names),
        }
        if self.ok is not None:
            record["ok"] = list(self.ok)
        if self.anonymous:
            record["anon"] = True
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> LoggedCalls:
        """The calls a ``calls`` record holds (a line without ``ok``: ``ok=None``);
        ``KeyError`` / ``TypeError`` / ``ValueError`` for a malformed one."""
        names = tuple(str(name) for name in record["names"])
        flags = record.get("ok")
        if flags is not None and (
            not isinstance(flags, list) or not all(isinstance(f, bool) for f in flags)
        ):
            raise ValueError("'ok' is not a list of booleans")
        return cls(
            float(record.get("time", 0.0)),
            str(record["session"]),
            str(record.get("tool_set", "")),
            names,
            None if flags is None else tuple(flags),
            record.get("anon") is True,
        )


@runtime_checkable
class SearchLog(Protocol):
    """Where the tool-search advisor reports searches and the tools the model called.

    Both methods run inside the request (the search's span, the tool-calling turn): keep
    them quick. An exception they raise is logged as a warning and never fails the
    request.
    """

    def record_search(self, search: LoggedSearch) -> None:
        """One search of the search tool."""

    def record_calls(self, calls: LoggedCalls) -> None:
        """The tools the model called on one turn (those that ran)."""


class TeeSearchLog:
    """A :class:`SearchLog` that hands every record to each of ``logs``, in order.

    One sink's exception is logged as a warning and does not keep the record from the
    others (``JsonlSearchLog`` beside a learning sink: a full disk must not stop learning).
    """

    def __init__(self, *logs: SearchLog) -> None:
        self.logs = tuple(logs)

    def __repr__(self) -> str:
        return f"TeeSearchLog({', '.join(repr(log) for log in self.logs)})"

    def record_search(self, search: LoggedSearch) -> None:
        for log in self.logs:
            try:
                log.record_search(search)
            except Exception:
                _log.warning("search log %r failed", log, exc_info=True)

    def record_calls(self, calls: LoggedCalls) -> None:
        for log in self.logs:
            try:
                log.record_calls(calls)
            except Exception:
                _log.warning("search log %r failed", log, exc_info=True)


class _Writer:
    """One open file per path in this process, shared by every log on that path."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.handle: IO[str] | None = None
        self.tool_sets: set[str] = set()

    def write(self, lines: Sequence[str]) -> None:
        with self.lock:
            if self.handle is None or self.handle.closed:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                torn = _ends_mid_line(self.path)
                self.handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
                if torn:  # a crash cut the last line short: new records start on their own
                    self.handle.write("\n")
            self.handle.write("".join(lines))
            self.handle.flush()

    def close(self) -> None:
        with self.lock:
            if self.handle is not None:
                self.handle.close()
                self.handle = None


def _ends_mid_line(path: Path) -> bool:
    """Whether the file's last byte is not a newline (its last line was cut short)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except FileNotFoundError:
        return False


_writers: dict[Path, _Writer] = {}
_writers_lock = threading.Lock()


def _writer(path: Path) -> _Writer:
    key = Path(os.path.abspath(path))
    with _writers_lock:
        writer = _writers.get(key)
        if writer is None:
            writer = _writers[key] = _Writer(key)
        return writer


class JsonlSearchLog:
    """A :class:`SearchLog` that appends JSON lines to ``path`` (created on first use).

    Lines, each a JSON object with ``"v"`` and ``"type"``:

    * ``tools``: a tool set's definitions (``tool_set``, ``tools``: name, description,
      input_schema, category), written once per tool set and process (``tools=False``:
      never; a replay then needs ``--catalog``);
    * ``search``: ``time``, ``session`` (hashed), ``tool_set``, ``index``,
      ``search_type``, ``query`` (**the model's text**), ``limit``, ``hits`` (name and
      score, best first), ``total_matches``, ``loaded``, ``visible_tools``,
      ``duration_ms``, ``error`` (when the index refused the query);
    * ``calls``: ``time``, ``session``, ``tool_set``, ``names`` (the tools the model called
      on one turn) and, from the tool-search advisor, ``ok`` (whether each call
      succeeded; the line is then written once the calls ran, with the turn's start as
      its ``time``).

    Nothing is ever rewritten:
    :func:`~toolsearch.search.logs.reader.read_search_log` joins searches to calls.
    Writes are thread-safe, and logs of one path in one process share one file handle; each line is
    written whole, with one ``write`` of a file opened for appending.
    """

    def __init__(self, path: str | os.PathLike[str], *, tools: bool = True) -> None:
        self.path = Path(path)
        self.record_tools = tools
        self._writer = _writer(self.path)

    def __repr__(self) -> str:
        return f"JsonlSearchLog({str(self.path)!r})"

    def record_search(self, search: LoggedSearch) -> None:
        lines = []
        writer = self._writer
        if self.record_tools and search.tools and search.tool_set not in writer.tool_sets:
            writer.tool_sets.add(search.tool_set)
            lines.append(
                _line(
                    {
                        "v": SEARCH_LOG_VERSION,
                        "type": "tools",
                        "time": round(search.time, 6),
                        "tool_set": search.tool_set,
                        "tools": [_tool_record(t) for t in search.tools],
                    }
                )
            )
        lines.append(_line(search.to_record()))
        writer.write(lines)

    def record_calls(self, calls: LoggedCalls) -> None:
        if calls.names:
            self._writer.write([_line(calls.to_record())])

    def close(self) -> None:
        """Close the file (the next record opens it again)."""
        self._writer.close()

    def __enter__(self) -> JsonlSearchLog:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _tool_record(tool: ToolDefinition) -> dict[str, Any]:
    record = tool.to_dict()
    if tool.category is not None:
        record["category"] = tool.category
    return record


# -- reading ------------------------------------------------------------------------------
