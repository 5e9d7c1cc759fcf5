"""Concurrent runs take turns on the event loop: the frameworks' per-step work over a whole
tool set (which a door cannot move off the loop) runs one run per loop iteration, never ten
in one. Structural: each test counts loop iterations, no clock is read."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from toolsearch.integrations._common import take_turn


class Iterations:
    """The number of the event loop's current iteration: a callback that schedules itself
    again with ``call_soon`` runs exactly once per iteration."""

    def __init__(self) -> None:
        self.now = 0
        self._stopped = False

    def start(self) -> None:
        asyncio.get_running_loop().call_soon(self._tick)

    def _tick(self) -> None:
        if not self._stopped:
            self.now += 1
            asyncio.get_running_loop().call_soon(self._tick)

    def stop(self) -> None:
        self._stopped = True


def test_concurrent_callers_go_on_one_per_loop_iteration() -> None:
    async def main() -> list[int]:
        clock = Iterations()
        clock.start()
        went: list[int] = []

        async def caller() -> None:
            await take_turn()
            went.append(clock.now)

        await asyncio.gather(*(caller() for _ in range(6)))
        clock.stop()
        return went

    went = asyncio.run(main())
    assert len(went) == 6
    assert len(set(went)) == 6  # no two in one iteration


def test_a_lone_caller_does_not_wait() -> None:
    async def main() -> tuple[int, int]:
        clock = Iterations()
        clock.start()
        await asyncio.sleep(0)
        before = clock.now
        await take_turn()
        after = clock.now
        clock.stop()
        return before, after

    before, after = asyncio.run(main())
    assert before == after


def test_a_cancelled_waiter_holds_up_no_one() -> None:
    async def main() -> list[str]:
        went: list[str] = []

        async def caller(name: str) -> None:
            await take_turn()
            went.append(name)

        first = asyncio.ensure_future(caller("first"))
        doomed = asyncio.ensure_future(caller("doomed"))
        last = asyncio.ensure_future(caller("last"))
        await asyncio.sleep(0)  # all three have asked; "first" went on
        doomed.cancel()
        await asyncio.gather(first, last)
        with pytest.raises(asyncio.CancelledError):
            await doomed
        return went

    assert asyncio.run(main()) == ["first", "last"]


def test_each_event_loop_has_its_own_turns() -> None:
    """A loop that stopped with callers waiting leaves nothing behind for the next one."""

    async def main() -> int:
        went = 0

        async def caller() -> None:
            nonlocal went
            await take_turn()
            went += 1

        await asyncio.gather(*(caller() for _ in range(3)))
        return went

    assert asyncio.run(main()) == 3
    assert asyncio.run(main()) == 3


# -- pydantic-ai -------------------------------------------------------------------------------


def _pydantic_agent(tools_listed: Callable[[], None]) -> Any:
    pytest.importorskip("pydantic_ai", reason="toolsearch[pydantic-ai] is not installed")
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.toolsets import FunctionToolset, WrapperToolset

    from toolsearch.indexes import RegexToolIndex
    from toolsearch.integrations.pydantic_ai import toolsearch_tool_search

    class Listing(WrapperToolset[Any]):
        async def get_tools(self, ctx: Any) -> Any:
            tools_listed()
            return await super().get_tools(ctx)

    def model(messages: list[Any], info: Any) -> ModelResponse:
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("search_tools", {"queries": ["weather"]})])

    def make(name: str) -> Tool[Any]:
        def run(city: str) -> str:
            return city

        return Tool(run, name=name, description=f"{name.replace('.', ' ')} for a city")

    tools = [make(f"weather.tool_{i}") for i in range(20)]
    return Agent(
        FunctionModel(model),
        toolsets=[Listing(FunctionToolset(tools)).defer_loading()],
        capabilities=[toolsearch_tool_search(RegexToolIndex())],
    )


def test_pydantic_ai_runs_list_their_tools_one_per_loop_iteration() -> None:
    async def main() -> list[int]:
        clock = Iterations()
        listed: list[int] = []
        agent = _pydantic_agent(lambda: listed.append(clock.now))
        clock.start()
        results = await asyncio.gather(*(agent.run(f"weather {i}") for i in range(5)))
        clock.stop()
        assert all(r.output == "done" for r in results)
        return listed

    listed = asyncio.run(main())
    assert len(listed) >= 10  # two model requests per run, each listing the tools
    # without turns the five runs' first listings all fall in one iteration; with them a
    # run's listing can share an iteration only with the tail of the previous run's step
    assert max(Counter(listed).values()) <= 2


def test_pydantic_ai_builds_a_tool_lists_wire_names_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pydantic_ai", reason="toolsearch[pydantic-ai] is not installed")
    from toolsearch.integrations import _pydantic_ai_toolset

    built: list[int] = []
    from toolsearch.models.wire_names import WireNames as real

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_pydantic_ai_toolset, "WireNames", counting)
    monkeypatch.setattr(_pydantic_ai_toolset, "_MAPPINGS", type(_pydantic_ai_toolset._MAPPINGS)())
    agent = _pydantic_agent(lambda: None)

    async def main() -> None:
        await asyncio.gather(*(agent.run(f"weather {i}") for i in range(3)))
        await agent.run("weather again")

    asyncio.run(main())
    assert len(built) == 1  # one tool list, one mapping, for every step of every run


# -- the OpenAI Agents SDK ---------------------------------------------------------------------


def _agents_tools() -> Any:
    pytest.importorskip("agents", reason="toolsearch[openai-agents] is not installed")
    from agents import function_tool, set_tracing_disabled

    from toolsearch.indexes import RegexToolIndex
    from toolsearch.integrations.openai_agents import ToolSearchAgentTools

    set_tracing_disabled(True)

    @function_tool
    def get_weather(city: str) -> str:
        """Get the weather forecast for a city."""
        return city

    @function_tool
    def send_email(to: str) -> str:
        """Send an email message."""
        return to

    return ToolSearchAgentTools([get_weather, send_email], index=RegexToolIndex())


def test_agents_sdk_runs_start_one_per_loop_iteration(monkeypatch: pytest.MonkeyPatch) -> None:
    search = _agents_tools()
    from agents import Agent, Runner

    async def main() -> list[int]:
        clock = Iterations()
        started: list[int] = []

        async def fake_run(agent: Any, input: Any, **kwargs: Any) -> str:
            started.append(clock.now)
            return "ok"

        monkeypatch.setattr(Runner, "run", fake_run)
        agent = Agent(name="a", tools=search.tools)
        clock.start()
        await asyncio.gather(*(search.run(agent, f"task {i}") for i in range(5)))
        clock.stop()
        return started

    started = asyncio.run(main())
    assert len(started) == 5
    assert len(set(started)) == 5


def test_agents_sdk_gates_answer_without_an_await_once_the_run_is_open() -> None:
    """The SDK asks every tool's gate on every turn: once the run's search run is open, a
    gate answers a bool (no task step, no shield of the opening per tool)."""
    import inspect

    from agents import RunContextWrapper, Usage

    search = _agents_tools()
    gates = [t for t in search.tools if t.name != search.search_tool_name]
    ctx = RunContextWrapper(context=None, usage=Usage())

    async def main() -> tuple[list[bool], list[Any]]:
        first = gates[0].is_enabled(ctx, None)
        assert inspect.isawaitable(first)  # the run opens at the first question
        opened = [await first]
        later = [gate.is_enabled(ctx, None) for gate in gates]
        return opened, later

    opened, later = asyncio.run(main())
    assert opened == [False]  # nothing discovered yet
    assert later == [False, False]  # plain bools, not awaitables


def test_agents_sdk_runs_open_their_search_runs_at_their_own_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run's first turn asks all its gates while its search run opens on a worker thread;
    the openings of concurrent runs, finishing together, woke every run's gates in one loop
    iteration. Each opening now hands its run to its gates at a turn of its own."""
    pytest.importorskip("agents", reason="toolsearch[openai-agents] is not installed")
    from agents import Agent, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message

    from toolsearch.integrations import openai_agents

    set_tracing_disabled(True)
    search = _agents_tools()
    turns: list[str] = []
    real_open = openai_agents.ToolSearchAgentTools._open

    async def recorded_turn() -> None:
        turns.append("turn")
        await take_turn()

    async def recorded_open(self: Any, ctx: Any) -> Any:
        turns.append("open")
        return await real_open(self, ctx)

    monkeypatch.setattr(openai_agents, "take_turn", recorded_turn)
    monkeypatch.setattr(openai_agents.ToolSearchAgentTools, "_open", recorded_open)

    async def one(i: int) -> None:
        model = ScriptedModel([[assistant_message("done")]])
        await search.run(Agent(name=f"a{i}", model=model, tools=search.tools), "hi")

    async def main() -> None:
        await asyncio.gather(*(one(i) for i in range(4)))

    asyncio.run(main())
    assert turns.count("open") == 4
    # each run takes a turn to start, and each opening one more before it returns
    assert turns.count("turn") == 8
    opened = [i for i, step in enumerate(turns) if step == "open"]
    assert all("turn" in turns[i + 1 :] for i in opened)
