"""The front-door contract: subclass :class:`FrontDoorContract`, set ``door_class`` (a
:class:`~toolsearch.testing.Door` driver of your front door), and pytest runs every check
through the framework's own machinery.

.. code-block:: python

    class TestMyDoor(FrontDoorContract):
        door_class = MyDoor
        requires = ("my_framework",)

Every door is a thin adapter over the search-session core; the contract holds it to what
the core promises:

* two concurrent runs without ids never see each other's discoveries;
* a framework's session object (or conversation, thread) is honoured;
* a call of a tool the run has not discovered is refused with a message, and nothing runs;
* every name on the wire is valid for OpenAI, Anthropic and Gemini and equals the name in
  the search result (a catalog with dotted, slashed and 70-character names);
* the ``tool_search`` span and the search metrics are emitted, naming the door (with an
  ``otel`` fixture: an OpenTelemetry SDK with in-memory exporters; skipped without one);
* what the model sees is viewable per session, each tool with its tokens;
* every call of a catalog tool reaches the door's search log with its outcome (success or
  failure), after the call ran (the path learning from use reads);
* an async door indexes and searches on worker threads, never on its event loop, and
  imports nothing on the loop once it has been warmed up (structure, not a wall-clock
  bound: the stall figures are ``benchmarks/loop_stall.py``'s).
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import pytest

from toolsearch.testing.front_doors import (
    DOOR_CATALOG,
    FOUND,
    ODD_CATALOG,
    Brain,
    Door,
    ThreadRecordingIndex,
    ToolFailed,
)

__all__ = ["FrontDoorContract"]


def _turn_of(calls: Sequence[Any], position: int) -> int:
    """The index of the logged turn holding the ``position``-th logged call."""
    seen = 0
    for turn, logged in enumerate(calls):
        seen += len(logged.names)
        if position < seen:
            return turn
    raise IndexError(position)


class FrontDoorContract:
    """Every check of a front door: set ``door_class`` (or implement :meth:`make_door`)
    in a ``Test...`` subclass."""

    door_class: ClassVar[type[Door] | None] = None
    requires: ClassVar[tuple[str, ...]] = ()
    """Modules the door's framework needs: the tests skip when one is missing."""

    def make_door(
        self, catalog: Sequence[tuple[str, str]] = DOOR_CATALOG, index: Any = None
    ) -> Door:
        """The door under test over ``catalog`` (and ``index``: BM25 when ``None``)."""
        if self.door_class is None:
            raise NotImplementedError(f"{type(self).__name__} must set door_class")
        return self.door_class(catalog, index)

    def door(self, **kwargs: Any) -> Door:
        for module in self.requires:
            if importlib.util.find_spec(module) is None:
                pytest.skip(f"{module} is not installed (the {self.door_name()} door's extra)")
        return self.make_door(**kwargs)

    def door_name(self) -> str:
        return self.door_class.name if self.door_class is not None else type(self).__name__

    def test_two_concurrent_runs_without_ids_never_see_each_others_discoveries(self) -> None:
        door = self.door()
        searched = threading.Event()

        def after_search(turn: int) -> None:
            if turn == 1:
                searched.set()

        def wait_for_the_other(turn: int) -> None:
            if turn == 1:
                assert searched.wait(30)

        first = Brain([("search", "send an email"), ("call", FOUND)], before=after_search)
        second = Brain(
            [("search", "weather forecast for a city"), ("answer",)], before=wait_for_the_other
        )
        with ThreadPoolExecutor(2) as pool:
            runs = [pool.submit(door.run, first), pool.submit(door.run, second)]
            for future in runs:
                future.result(timeout=60)  # a run's own failure fails the test

        assert first.found[0][0] == "send_email"
        assert "send_email" in door.trace.ran
        assert all("send_email" not in offered for offered in second.offered)
        assert "send_email" not in second.found[0]

    def test_a_framework_session_is_honoured(self) -> None:
        door = self.door()
        if not door.per_session:
            pytest.skip("the door keeps no discoveries: its clients always see the same tools")
        door.run(Brain([("search", "send an email"), ("answer",)]), session="conv-A")

        assert door.discovered("conv-A") == ["send_email"]
        assert door.discovered("conv-B") == []
        again, other = Brain([("answer",)]), Brain([("answer",)])
        door.run(again, session="conv-A")
        door.run(other, session="conv-B")
        if door.keeps_discoveries:
            assert "send_email" in again.offered[0]
        assert "send_email" not in other.offered[0]

    def test_what_the_model_sees_is_viewable_with_its_tokens(self) -> None:
        door = self.door()
        if not door.per_session:
            pytest.skip(
                "the door's clients always see the same tools; it loads nothing per session"
            )
        door.run(
            Brain([("search", "send an email"), ("call", FOUND), ("answer",)]), session="conv-L"
        )
        view = door.core().loaded("conv-L")
        assert view is not None
        assert view.session_id == "conv-L"
        assert view.tools[0].reason == "search"
        assert [t.reason for t in view.tools if t.name == "send_email"] == ["discovered"]
        assert all(t.tokens > 0 for t in view.tools)
        assert view.tokens == sum(t.tokens for t in view.tools)
        assert door.core().loaded("conv-other") is None

    def test_an_undiscovered_call_is_refused_with_a_message(self) -> None:
        door = self.door()
        # a door that calls by argument runs any tool it lists (a client read its schema in a
        # search): a name no server has is what it refuses
        target = "no_such_tool" if door.calls_by_argument else "send_email"
        door.run(Brain([("call", target), ("answer",)]))

        assert door.trace.ran == []
        [refusal] = door.trace.outputs
        assert target in refusal

    def test_every_name_on_the_wire_is_valid_and_the_search_result_speaks_it(self) -> None:
        from toolsearch.models.wire_names import ANTHROPIC_NAMES, GEMINI_NAMES, OPENAI_NAMES

        door = self.door(catalog=ODD_CATALOG)
        brain = Brain([("search", "create a github issue"), ("call", FOUND), ("answer",)])
        door.run(brain)

        found = brain.found[0][0]
        if not door.calls_by_argument:
            assert found in brain.offered[1]  # the name the search gave is the name offered
        assert door.trace.ran == ["github.create_issue"]  # and calling it runs the real tool
        if not door.names_its_tools:
            return  # the framework names the tools itself; agreement is what the door controls
        for offered in brain.offered:
            for wire in offered:
                assert OPENAI_NAMES.accepts(wire), wire
                assert ANTHROPIC_NAMES.accepts(wire), wire
                assert GEMINI_NAMES.accepts(wire), wire

    def test_a_call_reaches_the_search_log_with_its_outcome_after_it_ran(self) -> None:
        door = self.door()
        door.run(
            Brain([("search", "send an email"), ("call", FOUND), ("answer",)]), session="conv-O"
        )

        assert door.trace.ran == ["send_email"]
        assert ("send_email", True) in door.log.outcomes()
        logged = door.log.outcomes().index(("send_email", True))
        assert door.log.ran_before[_turn_of(door.log.calls, logged)] == 1  # after it ran
        assert door.log.searches, "the search reached the log too"
        assert door.log.calls[0].tool_set == door.log.searches[0].tool_set

    def test_a_failed_call_reaches_the_search_log_as_a_failure(self) -> None:
        door = self.door()
        door.failing.add("send_email")
        try:  # a framework may answer the failure to the model or raise it: either is fine
            door.run(
                Brain([("search", "send an email"), ("call", FOUND), ("answer",)]),
                session="conv-F",
            )
        except ToolFailed:
            pass
        except Exception as exc:  # raised through a framework's own error type
            if "send_email failed" not in repr(exc) and not isinstance(
                exc.__cause__ or exc.__context__, ToolFailed
            ):
                raise

        assert door.trace.ran == ["send_email"]
        assert ("send_email", False) in door.log.outcomes()
        assert ("send_email", True) not in door.log.outcomes()

    def test_a_run_without_a_session_leaves_nothing_behind(self) -> None:
        door = self.door()
        if not door.per_session:
            pytest.skip("the door keeps one session for all its clients")
        if not door.throwaway_runs:
            pytest.skip(f"{door.name}: every run has a conversation of the framework's own")
        core = door.core()
        sessions, keys = set(core.registry.session_ids()), set(core.registry.index_keys())

        door.run(Brain([("search", "send an email"), ("call", FOUND), ("answer",)]))
        gc.collect()  # a door may drop its run when the framework frees the run's objects

        searched = {event.session_id for event in door.events}
        assert searched, "the run searched"
        assert set(core.registry.session_ids()) <= sessions
        assert set(core.registry.index_keys()) <= keys
        assert [sid for sid in searched if core.loaded(sid) is not None] == []

    def test_the_search_span_and_metrics_are_emitted(self, request: pytest.FixtureRequest) -> None:
        try:
            otel = request.getfixturevalue("otel")
        except pytest.FixtureLookupError:
            pytest.skip("needs an `otel` fixture (an OpenTelemetry SDK with in-memory exporters)")
        door = self.door()
        door.run(Brain([("search", "send an email"), ("answer",)]))

        [span] = otel.named("retrieval")
        assert span.attributes["toolsearch.search.door"] == door.name
        assert span.attributes["toolsearch.search.hits"] >= 1
        histograms = otel.histograms()
        assert histograms["toolsearch.search.duration"]
        [event] = door.events
        assert event.door == door.name
        assert event.hit_names[0] == "send_email"

    def test_an_async_door_indexes_and_searches_off_its_event_loop(self) -> None:
        if self.door_class is not None and not hasattr(self.door_class, "arun"):
            pytest.skip("the door has no async run (arun)")
        index = ThreadRecordingIndex()
        door = self.door(index=index)
        run = getattr(door, "arun", None)
        if run is None:
            pytest.skip("the door has no async run (arun)")

        async def main() -> int:
            await asyncio.gather(
                *(run(Brain([("search", "send an email"), ("answer",)])) for _ in range(2))
            )
            return threading.get_ident()

        loop_thread = asyncio.run(main())

        assert len(door.events) == 2
        searched = [thread for what, thread in index.threads if what == "search"]
        assert len(searched) == 2
        on_loop = [what for what, thread in index.threads if thread == loop_thread]
        assert on_loop == [], f"{on_loop} ran on the event loop's thread"

    def test_a_warmed_up_door_imports_nothing_on_its_event_loop(self) -> None:
        """In a fresh interpreter (earlier tests' imports would hide a first-use import):
        build the door, warm it up as its docs say, run one async conversation, and list
        the modules toolsearch's code imported on the event loop's thread; building the
        door froze what was loaded out of the cyclic GC."""
        if self.door_class is None or not hasattr(self.door_class, "arun"):
            pytest.skip("the door has no async run (arun)")
        self.door()  # skips when the framework is missing
        source = inspect.getsourcefile(self.door_class)
        assert source is not None
        script = _IMPORT_PROBE.format(
            folder=os.path.dirname(os.path.abspath(source)),
            module=self.door_class.__module__,
            name=self.door_class.__qualname__,
        )
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["ran"] == ["send_email"]
        assert report["imported_by_toolsearch"] == [], report
        # what was loaded when the door was built is out of the cyclic GC's full
        # collections, which otherwise hold the loop for 0.2-1.8 s over it
        assert report["frozen"] > 0, report


_IMPORT_PROBE = """
import asyncio, json, os, sys, threading, importlib
sys.path.insert(0, {folder!r})
from toolsearch.testing.front_doors import FOUND, Brain

import gc
door = getattr(importlib.import_module({module!r}), {name!r})()
warm_up = getattr(door, "warm_up", None)
if warm_up is not None:
    warm_up()
frozen = gc.get_freeze_count()
here = os.path.dirname(os.path.abspath(importlib.import_module("toolsearch").__file__))
loop_thread = []
imported = []


class Probe:
    def find_spec(self, name, path=None, target=None):
        if loop_thread and threading.get_ident() == loop_thread[0]:
            frame = sys._getframe(1)
            while frame is not None and "importlib" in frame.f_code.co_filename:
                frame = frame.f_back
            while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
                frame = frame.f_back
            where = frame.f_code.co_filename if frame is not None else ""
            imported.append((name, where.startswith(here)))
        return None


sys.meta_path.insert(0, Probe())


async def main():
    loop_thread.append(threading.get_ident())
    await door.arun(Brain([("search", "send an email"), ("call", FOUND), ("answer",)]))


asyncio.run(main())
print(json.dumps({{
    "frozen": frozen,
    "ran": door.trace.ran,
    "imported_by_toolsearch": sorted({{n for n, ours in imported if ours}}),
    "imported_by_frameworks": sorted({{n for n, ours in imported if not ours}}),
}}))
"""
