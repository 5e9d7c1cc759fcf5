"""Reading a search log back: each search joined with the calls that followed it.

:func:`read_search_log` joins a :class:`~toolsearch.search.logs.sink.JsonlSearchLog` file's
lines by session and order: a search's *labels* are the tools among its hits that the model
then called in that session (:class:`LabeledSearch`); :func:`iter_search_log` gives the
records one by one (a usage memory replays them). A torn last line (a crash mid-write) and
lines of a newer version are skipped with a warning, never an error.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsearch.observe import hash_session_id
from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "LabeledSearch",
    "SearchLogContents",
    "iter_search_log",
    "parse_part",
    "read_search_log",
    "session_part",
]

_log = logging.getLogger("toolsearch.search.logs.sink")


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
    outcomes: tuple[bool | None, ...] = ()
    """Per label, whether a call of it succeeded (``True`` when any did), ``False`` when
    every recorded call failed, ``None`` when the log did not record it (older lines)."""

    @property
    def succeeded(self) -> tuple[str, ...]:
        """The labels with a recorded successful call."""
        return tuple(n for n, ok in zip(self.called, self.outcomes, strict=False) if ok is True)


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
    nothing). Lines are taken in file order, which is each session's order; a ``calls``
    line with outcomes (``ok``) was written after its calls ran, so searches that started
    after its ``time`` (the same turn's) are not its searches. ``sessions`` (``(k, n)``)
    keeps the sessions in part ``k`` of ``n`` (:func:`session_part`). Each label's outcome
    is in :attr:`LabeledSearch.outcomes`. ``ValueError`` names the line of a malformed
    record.
    """
    source = Path(path)
    searches: list[dict[str, Any]] = []
    by_session: dict[str, list[int]] = {}
    called: list[list[str]] = []
    outcomes: list[list[bool | None]] = []
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
                outcomes.append([])
                by_session.setdefault(session, []).append(len(searches) - 1)
            elif kind == "calls":
                calls = LoggedCalls.from_record(record)
                earlier = by_session.get(calls.session)
                if not earlier:
                    continue
                flags = calls.ok or (None,) * len(calls.names)
                for name, ok in zip(calls.names, flags, strict=True):
                    i = _labeled_search(searches, earlier, name, calls)
                    if i is None:
                        continue
                    if name not in called[i]:
                        called[i].append(name)
                        outcomes[i].append(ok)
                    else:
                        j = called[i].index(name)
                        outcomes[i][j] = _merge_outcomes(outcomes[i][j], ok)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ValueError) and str(exc).startswith(str(source)):
                raise
            raise ValueError(f"{source}:{number}: a malformed {kind!r} line ({exc!r})") from None
    return SearchLogContents(
        tuple(
            LabeledSearch(**s, called=tuple(c), outcomes=tuple(o))
            for s, c, o in zip(searches, called, outcomes, strict=True)
        ),
        tool_sets,
        skipped,
    )


def _labeled_search(
    searches: Sequence[Mapping[str, Any]], earlier: Sequence[int], name: str, calls: LoggedCalls
) -> int | None:
    """The search a call of ``name`` labels: the session's latest earlier search whose hits
    hold it (and, for calls written after they ran, that started by the turn's start)."""
    for i in reversed(earlier):
        search = searches[i]
        if calls.ok is not None and round(search["time"], 6) > round(calls.time, 6):
            continue  # the same turn's search: the call did not come from it
        if name in search["hits"]:
            return i
    return None


def _merge_outcomes(first: bool | None, second: bool | None) -> bool | None:
    """Two recorded outcomes of calls of one tool: a success wins, then a failure."""
    if first is True or second is True:
        return True
    if first is False or second is False:
        return False
    return None


def iter_search_log(path: str | os.PathLike[str]) -> Iterator[LoggedSearch | LoggedCalls]:
    """Replay a :class:`JsonlSearchLog` file: its searches and calls, in file order, as the
    objects a sink received (a search without its tool definitions; ``tools`` lines are
    skipped). Searches the index refused are included (their ``error`` is set). A torn
    line is skipped as :func:`read_search_log` skips it; ``ValueError`` names the line of a
    malformed record."""
    source = Path(path)
    for number, record in _records(source):
        kind = record["type"]
        try:
            if kind == "search":
                yield LoggedSearch.from_record(record)
            elif kind == "calls":
                yield LoggedCalls.from_record(record)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{source}:{number}: a malformed {kind!r} line ({exc!r})") from None


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
