"""``McpToolProvider`` against real MCP servers started as subprocesses (stdio) and over
streamable HTTP on 127.0.0.1: listing, calls, typed errors, prefixes, filters, lazy
connection, tool-list changes and closing (no server process outlives the provider)."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

pytest.importorskip("mcp")

from mcp.types import Tool
from mcp_servers.helpers import DEMO, alive, eventually, free_port, running, stdio

from toolsearch.errors import (
    InvalidToolArgumentsError,
    McpConnectionError,
    McpError,
    McpToolError,
    ToolExecutionError,
    ToolTransportError,
)
from toolsearch.loop.manager import ToolCallingManager
from toolsearch.mcp import HttpServerConfig, McpToolProvider, StdioServerConfig
from toolsearch.mcp.exposure import expose as _expose
from toolsearch.tools import ToolCallback


@pytest.fixture(scope="module")
def provider():
    servers = {
        "alpha": stdio("alpha", env={"GREETING": "hello from env"}),
        "beta": stdio("beta", include_tools=["add", "whoami", "slow"], timeout=1.0),
    }
    with McpToolProvider(servers) as mcp_tools:
        yield mcp_tools


def by_name(provider: McpToolProvider) -> dict[str, ToolCallback]:
    return {cb.definition.name: cb for cb in provider.tool_callbacks()}


# -- listing and names ---------------------------------------------------------------------


def test_tools_become_callbacks_and_only_clashing_names_get_a_server_prefix(provider):
    tools = by_name(provider)
    # both servers offer add, whoami and slow: prefixed; alpha's other tools keep their names
    for clash in ("add", "whoami", "slow"):
        assert f"alpha__{clash}" in tools
        assert f"beta__{clash}" in tools
        assert clash not in tools
    assert {"echo_env", "fail", "weather_forecast", "pid"} <= set(tools)
    assert not any(name.startswith("beta__") and "weather" in name for name in tools)
    assert all(isinstance(cb, ToolCallback) for cb in tools.values())
    forecast = tools["weather_forecast"].definition
    assert forecast.description.startswith("Get the weather forecast")
    assert forecast.input_schema["required"] == ["city"]
    assert forecast.category == "alpha"
    assert tools["beta__add"].server == "beta"
    assert tools["beta__add"].tool_name == "add"


def test_calls_reach_the_right_server_with_its_environment(provider):
    tools = by_name(provider)
    assert tools["alpha__add"].call(json.dumps({"a": 2, "b": 3})) == "5"
    assert tools["beta__whoami"].call("{}") == "beta"
    assert tools["alpha__whoami"].call("") == "alpha"
    assert tools["echo_env"].call('{"variable": "GREETING"}') == "hello from env"
    # the rest of this process's environment is not passed on
    assert tools["echo_env"].call('{"variable": "PYTEST_CURRENT_TEST"}') == "<unset>"


def test_async_calls_work_from_another_event_loop(provider):
    tools = by_name(provider)

    async def both() -> list[str]:
        return list(
            await asyncio.gather(
                tools["alpha__add"].acall('{"a": 40, "b": 2}'),
                tools["beta__add"].acall('{"a": 1, "b": 1}'),
            )
        )

    assert asyncio.run(both()) == ["42", "2"]


def test_an_is_error_result_raises_the_tools_own_error(provider):
    with pytest.raises(ToolExecutionError, match="the disk is full") as raised:
        by_name(provider)["fail"].call('{"message": "the disk is full"}')
    assert not isinstance(raised.value, ToolTransportError)
    assert isinstance(raised.value.cause, McpToolError)
    assert str(raised.value.cause).endswith("the disk is full")  # the server's own text
    assert raised.value.tool_name == "fail"


def test_arguments_that_do_not_fit_the_schema_raise_before_the_call(provider):
    with pytest.raises(InvalidToolArgumentsError, match="alpha__add") as raised:
        by_name(provider)["alpha__add"].call('{"a": "many"}')
    assert "a: expected integer, got string" in str(raised.value)
    assert "b: required property is missing" in str(raised.value)


def test_a_timeout_raises_a_transport_error_and_the_session_survives(provider):
    tools = by_name(provider)
    with pytest.raises(ToolTransportError, match="timed out") as raised:
        tools["beta__slow"].call('{"seconds": 20}')
    assert isinstance(raised.value.cause, TimeoutError)
    assert "'slow' on MCP server 'beta'" in str(raised.value)
    assert tools["beta__whoami"].call("{}") == "beta"


def test_async_failures_raise_the_same_errors(provider):
    tools = by_name(provider)

    async def fail() -> None:
        await tools["fail"].acall('{"message": "async disk"}')

    with pytest.raises(ToolExecutionError, match="async disk"):
        asyncio.run(fail())


def test_arguments_that_are_not_a_json_object_raise_invalid_arguments(provider):
    tool = by_name(provider)["alpha__add"]
    with pytest.raises(InvalidToolArgumentsError, match="alpha__add"):
        tool.call("{not json")
    with pytest.raises(InvalidToolArgumentsError, match="object"):
        tool.call("[1, 2]")


def test_the_loop_gives_the_model_the_error_text(provider):
    from toolsearch.chat.messages import ToolCall
    from toolsearch.tools.context import ToolContext

    manager = ToolCallingManager()
    tool = by_name(provider)["fail"]
    call = ToolCall(id="1", name="fail", arguments='{"message": "the disk is full"}')
    text = manager.execute_one(tool, call, ToolContext())
    assert text.startswith("McpToolError: ")
    assert text.endswith("the disk is full")


def test_the_provider_is_a_resolver_for_tool_names(provider):
    found = provider.resolve("weather_forecast")
    assert found is not None
    assert found.call('{"city": "Oslo"}') == "sunny in Oslo"
    assert provider.resolve("no_such_tool") is None
    manager = ToolCallingManager(resolver=provider)
    assert manager.resolver.resolve("alpha__add") is not None
    assert provider.call_tool("alpha__add", {"a": 1, "b": 2}) == "3"
    with pytest.raises(McpError, match="missing"):
        provider.call_tool("missing", {})


def test_a_tool_list_change_is_followed(provider):
    before = provider.version
    assert by_name(provider)["add_tool"].call('{"tool_name": "zap_widget"}') == "added"
    assert eventually(lambda: provider.resolve("zap_widget") is not None, timeout=10)
    assert provider.version > before
    assert provider.resolve("zap_widget").call("{}") == "zap_widget ran"


def test_refresh_finds_tools_added_without_notice(provider):
    assert by_name(provider)["add_tool_quietly"].call('{"tool_name": "hush"}') == "added"
    provider.refresh("alpha")
    assert provider.resolve("hush") is not None


def test_a_tool_with_an_over_long_name_is_exposed_cut_and_called_by_its_real_name(provider):
    real = "quietly_registered_tool_with_a_name_far_longer_than_any_provider_accepts"
    assert len(real) > 64
    assert by_name(provider)["add_tool_quietly"].call(json.dumps({"tool_name": real})) == "added"
    provider.refresh("alpha")
    (exposed,) = [cb for cb in provider.tool_callbacks() if cb.tool_name == real]
    assert len(exposed.definition.name) == 64
    assert exposed.definition.name.startswith("quietly_registered_tool")
    assert provider.resolve(exposed.definition.name) is not None
    assert exposed.call("{}") == "quiet"


# -- filters and prefixes --------------------------------------------------------------------


def test_tool_filter_sees_server_and_definition():
    seen = []

    def only_beta_readers(server, definition):
        seen.append((server, definition.name))
        return server == "beta" and definition.name in ("whoami", "add")

    with McpToolProvider(
        {"alpha": stdio("alpha"), "beta": stdio("beta")}, tool_filter=only_beta_readers
    ) as mcp_tools:
        names = sorted(cb.definition.name for cb in mcp_tools.tool_callbacks())
    assert names == ["add", "whoami"]  # no clash once alpha's tools are filtered out
    assert ("alpha", "weather_forecast") in seen


def _tools(*names: str) -> list[Tool]:
    return [
        Tool(name=n, description=f"{n} tool", input_schema={"type": "object", "properties": {}})
        for n in names
    ]


def _configs(*servers: str) -> dict[str, StdioServerConfig]:
    return {s: StdioServerConfig(command="x") for s in servers}


def test_prefix_modes():
    tools = {"git hub": _tools("search", "create_issue"), "slack": _tools("search", "post")}
    configs = _configs("git hub", "slack")
    auto = _expose(tools, configs, None, "auto", "__")
    assert list(auto) == ["git_hub__search", "create_issue", "slack__search", "post"]
    assert auto["git_hub__search"].tool_name == "search"
    always = _expose(tools, configs, None, "always", "_")
    assert list(always) == [
        "git_hub_search",
        "git_hub_create_issue",
        "slack_search",
        "slack_post",
    ]
    never = _expose(tools, configs, None, "never", "__")
    assert list(never) == ["search", "create_issue", "post"]
    assert never["search"].server == "git hub"


def test_the_default_separator_is_the_catalogs_two_underscores():
    from toolsearch.tools.names import CLASH_SEPARATOR

    provider = McpToolProvider({"github": {"command": "x"}})
    assert provider._separator == CLASH_SEPARATOR == "__"


def test_clashing_names_match_the_catalog_built_from_a_dump_of_the_same_servers(tmp_path):
    from toolsearch.catalog.sources import iter_tools

    listed = {"git.hub": ["search", "create_issue"], "slack": ["search", "post"]}
    for server, names in listed.items():
        records = [{"name": n, "description": f"{n} tool"} for n in names]
        (tmp_path / f"{server}.json").write_text(json.dumps({"server": server, "tools": records}))
    from_catalog = sorted(t.name for t in iter_tools([tmp_path], kind="mcp"))
    tools = {server: _tools(*names) for server, names in listed.items()}
    separator = McpToolProvider(_configs(*listed))._separator  # the default
    from_client = sorted(_expose(tools, _configs(*listed), None, "auto", separator))
    assert (
        from_client == from_catalog == ["create_issue", "git_hub__search", "post", "slack__search"]
    )


def test_names_longer_than_64_characters_are_cut_and_still_reach_the_real_tool():
    long_tool = "get_the_complete_history_of_every_change_made_to_a_repository_file"
    server = "enterprise-source-control"
    tools = {server: _tools(long_tool, "search"), "other": _tools("search")}
    configs = _configs(server, "other")
    exposed = _expose(tools, configs, None, "always", "__")
    names = list(exposed)
    assert all(len(name) <= 64 for name in names)
    cut = names[0]
    assert cut.startswith("enterprise-source-contro__get_the_complete")  # catalog: 24-char prefix
    assert exposed[cut].tool_name == long_tool  # the server's own name, used for calls
    assert exposed[cut].server == server
    assert exposed[cut].definition.name == cut
    # deterministic: the same input gives the same names
    assert list(_expose(tools, configs, None, "always", "__")) == names
    # an unprefixed over-long name is cut the same way
    alone = _expose({server: _tools(long_tool + "_and_more")}, configs, None, "auto", "__")
    (only,) = alone
    assert len(only) == 64
    assert alone[only].tool_name == long_tool + "_and_more"


def test_include_and_exclude_patterns():
    config = StdioServerConfig(
        command="x", include_tools=("read_*", "list_*"), exclude_tools=("*_secret",)
    )
    assert config.exposes("read_file")
    assert config.exposes("list_dir")
    assert not config.exposes("write_file")
    assert not config.exposes("read_secret")
    exposed = _expose(
        {"fs": _tools("read_file", "write_file", "read_secret")}, {"fs": config}, None, "auto", "__"
    )
    assert list(exposed) == ["read_file"]


# -- connecting lazily, failing clearly, closing -------------------------------------------


def test_nothing_connects_before_first_use():
    mcp_tools = McpToolProvider({"ghost": {"command": "/nonexistent/mcp-server"}})
    assert not mcp_tools.connected
    assert mcp_tools._loop is None  # no thread, no process yet
    with pytest.raises(McpConnectionError, match="ghost"):
        mcp_tools.tool_callbacks()
    mcp_tools.close()
    with pytest.raises(McpError, match="closed"):
        mcp_tools.connect()


def test_an_unreachable_server_can_be_left_out():
    with McpToolProvider(
        {"ghost": {"command": "/nonexistent/mcp-server"}, "alpha": stdio("alpha")},
        on_connect_error="skip",
    ) as mcp_tools:
        names = {cb.definition.name for cb in mcp_tools.tool_callbacks()}
        assert "whoami" in names
        assert list(mcp_tools.failures) == ["ghost"]


def test_an_http_url_nobody_listens_on_fails_with_the_server_name():
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with (
        McpToolProvider({"remote": {"url": url, "connect_timeout": 5}}) as mcp_tools,
        pytest.raises(McpConnectionError, match="remote"),
    ):
        mcp_tools.connect()


def test_close_stops_every_server_process():
    mcp_tools = McpToolProvider({"one": stdio("one"), "two": stdio("two")})
    tools = by_name(mcp_tools)
    pids = [int(tools["one__pid"].call("{}")), int(tools["two__pid"].call("{}"))]
    assert all(alive(pid) for pid in pids)
    mcp_tools.close()
    assert eventually(lambda: not any(alive(pid) for pid in pids), timeout=10)
    mcp_tools.close()  # idempotent


def test_async_context_manager_connects_and_closes():
    async def run() -> tuple[str, int]:
        async with McpToolProvider({"solo": stdio("solo")}) as mcp_tools:
            callbacks = await mcp_tools.atool_callbacks()
            tools = {cb.definition.name: cb for cb in callbacks}
            return await tools["whoami"].acall("{}"), int(await tools["pid"].acall("{}"))

    name, pid = asyncio.run(run())
    assert name == "solo"
    assert eventually(lambda: not alive(pid), timeout=10)


# -- streamable HTTP ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url():
    port = free_port()
    with running([sys.executable, str(DEMO), "--name", "remote", "--http", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def test_streamable_http_server_lists_and_calls(http_url):
    config = HttpServerConfig(url=http_url, headers={"X-Trace": "test"})
    with McpToolProvider({"remote": config, "alpha": stdio("alpha")}) as mcp_tools:
        tools = by_name(mcp_tools)
        assert tools["remote__whoami"].call("{}") == "remote"
        assert tools["alpha__whoami"].call("{}") == "alpha"
        assert tools["remote__add"].call('{"a": 20, "b": 22}') == "42"
        assert tools["remote__http_header"].call('{"header": "x-trace"}') == "test"
        with pytest.raises(ToolExecutionError, match="over http"):
            tools["remote__fail"].call('{"message": "over http"}')


def test_a_forgotten_provider_stops_its_servers_when_collected():
    import gc

    mcp_tools = McpToolProvider({"lost": stdio("lost")})
    pid = int(mcp_tools.call_tool("pid"))
    assert alive(pid)
    del mcp_tools
    gc.collect()
    assert eventually(lambda: not alive(pid), timeout=10)


def test_a_server_that_died_is_started_again_on_the_next_call():
    import os
    import signal

    with McpToolProvider({"fragile": stdio("fragile")}) as mcp_tools:
        first = int(mcp_tools.call_tool("pid"))
        os.kill(first, signal.SIGKILL)
        assert eventually(lambda: not alive(first), timeout=10)
        with pytest.raises(ToolTransportError, match="fragile") as lost:
            mcp_tools.call_tool("whoami")
        assert isinstance(lost.value.cause, McpConnectionError)
        assert mcp_tools.call_tool("whoami") == "fragile"
        assert int(mcp_tools.call_tool("pid")) != first


def test_callbacks_of_a_closed_provider_raise_a_transport_error():
    mcp_tools = McpToolProvider({"brief": stdio("brief")})
    whoami = mcp_tools.resolve("whoami")
    mcp_tools.close()
    with pytest.raises(ToolTransportError, match="closed"):
        whoami.call("{}")


def test_concurrent_first_uses_start_one_session_per_server():
    from concurrent.futures import ThreadPoolExecutor

    with McpToolProvider({"shared": stdio("shared")}) as mcp_tools:
        with ThreadPoolExecutor(4) as pool:
            pids = list(pool.map(lambda _: mcp_tools.call_tool("pid"), range(8)))
        assert len(set(pids)) == 1
        assert pids[0].isdigit()


def test_a_server_that_never_answers_times_out_and_is_stopped(tmp_path):
    marker = tmp_path / "pid"
    script = f"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    with (
        McpToolProvider(
            {"mute": {"command": sys.executable, "args": ["-c", script], "connect_timeout": 1}}
        ) as mcp_tools,
        pytest.raises(McpConnectionError, match=r"'mute' did not finish connecting within 1 s"),
    ):
        mcp_tools.connect()
    pid = int(marker.read_text())
    assert eventually(lambda: not alive(pid), timeout=10)


def test_the_sync_path_works_inside_a_running_event_loop_and_close_ends_the_thread():
    """As in a notebook cell: blocking calls made while the caller's loop runs."""
    import threading

    def loop_threads() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name.startswith("toolsearch-mcp")]

    before = loop_threads()

    async def cell() -> tuple[str, str, list[str]]:
        with McpToolProvider({"nb": stdio("nb")}) as mcp_tools:
            whoami = mcp_tools.call_tool("whoami")
            added = mcp_tools.resolve("add").call('{"a": 1, "b": 2}')
            return whoami, added, loop_threads()

    whoami, added, during = asyncio.run(cell())
    assert (whoami, added) == ("nb", "3")
    assert len(during) == len(before) + 1
    assert loop_threads() == before


def test_closing_on_the_providers_own_loop_thread_still_stops_the_servers():
    """The garbage collector may finalize a forgotten provider on its loop thread. The
    server here is a shell that outlives its MCP child's end of input (as a wrapper
    script might): only a real session shutdown, not dropping the pipes, stops it."""
    from pathlib import Path

    script = f"{sys.executable} {DEMO} --name inner; sleep 60"
    mcp_tools = McpToolProvider({"inner": {"command": "/bin/sh", "args": ["-c", script]}})
    child = int(mcp_tools.call_tool("pid"))
    status = Path(f"/proc/{child}/status").read_text()
    shell = int(next(line for line in status.splitlines() if line.startswith("PPid:")).split()[1])
    loop = mcp_tools._loop

    async def close_here() -> bool:
        mcp_tools.close()
        return loop.in_loop_thread

    assert loop.run(close_here()) is True
    assert eventually(lambda: not alive(child) and not alive(shell), timeout=15)
    assert eventually(lambda: not loop.thread.is_alive(), timeout=10)


def test_the_loop_thread_finalizes_like_asyncio_run():
    """The provider's loop is the package's bridge: tasks left running when it stops are
    cancelled (their ``finally`` runs) and the thread ends."""
    from toolsearch._async import LoopThread

    cleaned = []

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            cleaned.append(True)

    async def answer() -> int:
        return 42

    with LoopThread("toolsearch-test-loop") as bridge:
        bridge.spawn(forever())
        assert bridge.run(answer(), timeout=5) == 42
        assert asyncio.run(bridge.run_async(answer())) == 42
    assert cleaned == [True]
    assert not bridge.thread.is_alive()
    assert bridge.loop.is_closed()
    bridge.stop()  # idempotent
