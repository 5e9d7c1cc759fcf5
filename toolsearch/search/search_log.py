"""Search logs: what each tool search was asked, what it returned, and what the model called.

A :class:`SearchLog` is a sink on the tool-search advisor
(``ToolSearchToolCallingAdvisor(search_log=...)``). The advisor hands it a
:class:`LoggedSearch` after every search and a :class:`LoggedCalls` for every turn in which
the model called tools. The two are joined later, by session and order: a search's
*labels* are the tools among its hits that the model then called in that session
(:func:`read_search_log`). Those labels score any index on real traffic
(``toolsearch bench --replay LOG``) and train the embedder
(``toolsearch embedder finetune --search-log LOG``).

:class:`JsonlSearchLog` is the file sink: append-only JSON lines, one per search, one per
turn with tool calls, and once per tool set the tool definitions (so a replay can rebuild
the catalog). Sessions are hashed (:func:`~toolsearch.observe.hash_session_id`), but
**the query text is user content** and is written as the model sent it: a log is only
kept when you pass a path, and it should be stored like any other user data.

Other sinks (a database, a queue) implement the two methods of :class:`SearchLog`;
:meth:`LoggedSearch.to_record` and :meth:`LoggedCalls.to_record` give the JSON objects
the file holds.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Protocol, runtime_checkable

from toolsearch.observe import hash_session_id
from toolsearch.search.events import ToolSearchEvent
from toolsearch.search.types import MAX_QUERY_LENGTH
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "SEARCH_LOG_VERSION",
    "JsonlSearchLog",
    "LabeledSearch",
    "LoggedCalls",
    "LoggedSearch",
    "SearchLog",
    "SearchLogContents",
    "read_search_log",
    "session_part",
]

_log = logging.getLogger(__name__)

SEARCH_LOG_VERSION = 1
"""The ``v`` of every line :class:`JsonlSearchLog` writes."""


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
    it once per ``tool_set``, or ignore it.
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

    @classmethod
    def from_event(
        cls,
        event: ToolSearchEvent,
        *,
        tools: Sequence[ToolDefinition] = (),
        loaded: Iterable[str] = (),
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
        return record


@dataclass(frozen=True)
class LoggedCalls:
    """The tools the model called on one turn of a session (the search tool left out)."""

    time: float
    session: str
    tool_set: str
    names: tuple[str, ...]

    @classmethod
    def of(cls, session_id: str, index_key: str, names: Iterable[str], time: float) -> LoggedCalls:
        return cls(time, hash_session_id(session_id), tool_set_digest(index_key), tuple(names))

    def to_record(self) -> dict[str, Any]:
        return {
            "v": SEARCH_LOG_VERSION,
            "type": "calls",
            "time": round(self.time, 6),
            "session": self.session,
            "tool_set": self.tool_set,
            "names": list(self.names),
        }


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
      on one turn).

    Nothing is ever rewritten: :func:`read_search_log` joins searches to calls. Writes are
    thread-safe, and logs of one path in one process share one file handle; each line is
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


@dataclass(frozen=True)
class LabeledSearch:
    """A logged search with its labels: the hits the model then called in the session."""

    session: str
    tool_set: str
    query: str
    index: str
    hits: tuple[str, ...]
    loaded: tuple[str, ...]
    called: tuple[str, ...]
    """The labels, in the order the model called them (empty: none of the hits was called)."""
    time: float
    line: int


@dataclass(frozen=True)
class SearchLogContents:
    """A search log, read and joined: every search with its labels, and the tool sets."""

    searches: tuple[LabeledSearch, ...]
    tool_sets: Mapping[str, tuple[ToolDefinition, ...]]
    skipped: int = 0
    """Searches left out: refused by the index (an error) or outside ``sessions``."""

    @property
    def labeled(self) -> list[LabeledSearch]:
        """The searches with at least one label."""
        return [s for s in self.searches if s.called]

    @property
    def sessions(self) -> list[str]:
        return list(dict.fromkeys(s.session for s in self.searches))

    def catalog_tools(self) -> list[ToolDefinition]:
        """Every logged tool once by name (the latest tool set's definition wins)."""
        tools: dict[str, ToolDefinition] = {}
        for tool_set in self.tool_sets.values():
            for tool in tool_set:
                tools.pop(tool.name, None)
                tools[tool.name] = tool
        return list(tools.values())


def session_part(session: str, part: tuple[int, int] | None) -> bool:
    """Whether a (hashed) session falls in part ``k`` of ``n`` (``(k, n)``, 1-based):
    a split by the hash, the same on every read. ``None``: every session."""
    if part is None:
        return True
    k, n = part
    try:
        number = int(session[:16], 16)
    except ValueError:
        number = int(hash_session_id(session), 16)
    return number % n == k - 1


def parse_part(text: str) -> tuple[int, int]:
    """``"1/2"`` -> ``(1, 2)``; ``ValueError`` for anything but ``K/N`` with 1 <= K <= N."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise ValueError(f"{text!r} is not K/N (e.g. 1/2)") from None
    if not 1 <= k <= n:
        raise ValueError(f"{text!r}: K/N needs 1 <= K <= N")
    return k, n


_RECORD_START = '{"v":'


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The log's records with their line numbers. A line cut short by a crash (a record's
    beginning that does not parse) is skipped with a warning, wherever it is: the writer
    that appends next starts on a new line, and when an older writer joined its record to
    the fragment, that record is read from where it starts. Any other line that is not
    JSON raises ``ValueError`` naming it."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                if not text.endswith("\n"):  # a last line cut short by a crash: skipped
                    _log.warning("%s:%d: an incomplete last line was skipped", path, number)
                    continue
                if not text.startswith(_RECORD_START):  # not ours cut short: malformed
                    raise ValueError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
                _log.warning("%s:%d: a line cut short by a crash was skipped", path, number)
                record = _after_torn_fragment(text)
                if record is None:
                    continue
            if not isinstance(record, dict) or "type" not in record:
                raise ValueError(f"{path}:{number}: not a search-log line (no 'type')")
            yield number, record


def _after_torn_fragment(text: str) -> Any:
    """The record that starts after a torn fragment on one line (``None``: none)."""
    start = text.rfind(_RECORD_START)
    if start <= 0:
        return None
    try:
        return json.loads(text[start:])
    except json.JSONDecodeError:
        return None


def read_search_log(
    path: str | os.PathLike[str], *, sessions: tuple[int, int] | None = None
) -> SearchLogContents:
    """Read a :class:`JsonlSearchLog` file and join each search to the model's calls.

    A call of tool ``T`` in a session labels the latest earlier search of that session
    whose hits hold ``T`` (a tool the model called that no search returned labels
    nothing). Lines are taken in file order, which is each session's order. ``sessions``
    (``(k, n)``) keeps the sessions in part ``k`` of ``n`` (:func:`session_part`).
    ``ValueError`` names the line of a malformed record.
    """
    source = Path(path)
    searches: list[dict[str, Any]] = []
    by_session: dict[str, list[int]] = {}
    called: list[list[str]] = []
    tool_sets: dict[str, tuple[ToolDefinition, ...]] = {}
    skipped = 0
    for number, record in _records(source):
        kind = record["type"]
        try:
            if kind == "tools":
                tool_sets[str(record["tool_set"])] = tuple(
                    _tool_from(t, source, number) for t in record["tools"]
                )
            elif kind == "search":
                session = str(record["session"])
                if record.get("error") or not session_part(session, sessions):
                    skipped += 1
                    continue
                hits = tuple(str(h["name"]) for h in record["hits"])
                searches.append(
                    {
                        "session": session,
                        "tool_set": str(record["tool_set"]),
                        "query": str(record["query"]),
                        "index": str(record.get("index", "")),
                        "hits": hits,
                        "loaded": tuple(str(n) for n in record.get("loaded") or ()),
                        "time": float(record.get("time", 0.0)),
                        "line": number,
                    }
                )
                called.append([])
                by_session.setdefault(session, []).append(len(searches) - 1)
            elif kind == "calls":
                earlier = by_session.get(str(record["session"]))
                if not earlier:
                    continue
                for name in record["names"]:
                    name = str(name)
                    for i in reversed(earlier):
                        if name in searches[i]["hits"]:
                            if name not in called[i]:
                                called[i].append(name)
                            break
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ValueError) and str(exc).startswith(str(source)):
                raise
            raise ValueError(f"{source}:{number}: a malformed {kind!r} line ({exc!r})") from None
    return SearchLogContents(
        tuple(LabeledSearch(**s, called=tuple(c)) for s, c in zip(searches, called, strict=True)),
        tool_sets,
        skipped,
    )


def _tool_from(record: Mapping[str, Any], path: Path, number: int) -> ToolDefinition:
    try:
        return ToolDefinition(
            name=str(record["name"]),
            description=str(record.get("description") or ""),
            input_schema=record.get("input_schema") or {"type": "object", "properties": {}},
            category=record.get("category"),
        )
    except Exception as exc:
        raise ValueError(f"{path}:{number}: a tool that is not valid ({exc})") from None
