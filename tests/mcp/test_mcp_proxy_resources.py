"""The proxy forwards its servers' prompts and resources, driven as an MCP client drives
it: prompts under the names tools get (prefixed when several servers offer one), resources
under ``toolsearch://<server>/<uri>`` URIs that read back to the upstream's contents.
Upstream servers are real subprocesses: two copies of ``passthrough_server.py``, and
servers with no prompts or resources alongside (a low-level one that does not advertise
them, an MCPServer that advertises them and has none)."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_servers.helpers import DEMO, HERE, TOOLS, cli_proxy, with_client

from toolsearch.mcp import McpSearchProxy, McpToolProvider
from toolsearch.mcp.exposure import exposed_names
from toolsearch.mcp.passthrough import Passthrough, proxy_uri, split_proxy_uri

PASSTHROUGH = HERE / "passthrough_server.py"
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601


def passthrough(name: str) -> dict:
    return {"command": sys.executable, "args": [str(PASSTHROUGH), "--name", name]}


def upstream(name: str) -> StdioServerParameters:
    """A copy of the passthrough server to talk to directly (what the proxy forwards)."""
    return StdioServerParameters(command=sys.executable, args=[str(PASSTHROUGH), "--name", name])


@pytest.fixture(scope="module")
def proxy():
    servers = {
        "one": passthrough("one"),
        "two": passthrough("two"),
        "tools": {"command": sys.executable, "args": [str(TOOLS)]},  # no prompts/resources
        "demo": {"command": sys.executable, "args": [str(DEMO)]},  # advertises them, has none
    }
    with McpToolProvider(servers) as provider:
        search_proxy = McpSearchProxy(provider, index="regex")
        asyncio.run(search_proxy.start())
        yield search_proxy


def test_prompts_and_resources_are_advertised_when_a_server_offers_them(proxy):
    async def scenario(client):
        return client.server_capabilities

    capabilities = with_client(proxy, scenario)
    assert capabilities.prompts is not None
    assert capabilities.resources is not None
    assert not capabilities.resources.subscribe  # subscriptions are not forwarded
    assert proxy.passthrough.offers == {"prompts": True, "resources": True}


def test_prompts_are_listed_under_the_names_tools_get(proxy):
    async def scenario(client):
        return (await client.list_prompts()).prompts

    prompts = {p.name: p for p in with_client(proxy, scenario)}
    # "greet" is on both copies: prefixed, as a clashing tool name is; the others keep theirs
    assert list(prompts) == ["one__greet", "about_one", "two__greet", "about_two"]
    greet = prompts["two__greet"]
    assert greet.description == "Greet someone in the given tone."
    assert [(a.name, a.required) for a in greet.arguments] == [("person", True), ("tone", False)]


def test_a_prompt_is_got_from_its_server_with_its_arguments(proxy):
    async def scenario(client):
        return (
            await client.get_prompt("two__greet", {"person": "Ada", "tone": "dry"}),
            await client.get_prompt("one__greet", {"person": "Lin"}),
            await client.get_prompt("about_one"),
        )

    two, one, about = with_client(proxy, scenario)
    assert two.messages[0].role == "user"
    assert two.messages[0].content.text == "Write a dry greeting for Ada, signed two."
    assert one.messages[0].content.text == "Write a warm greeting for Lin, signed one."
    assert about.messages[0].content.text == "Tell me about the server one."


def test_resources_and_templates_are_listed_with_rewritten_uris(proxy):
    async def scenario(client):
        return (
            (await client.list_resources()).resources,
            (await client.list_resource_templates()).resource_templates,
        )

    resources, templates = with_client(proxy, scenario)
    assert [r.uri for r in resources] == [
        "toolsearch://one/demo://readme",
        "toolsearch://one/demo://logo.png",
        "toolsearch://two/demo://readme",
        "toolsearch://two/demo://logo.png",
    ]
    assert {r.uri: r.mime_type for r in resources}["toolsearch://two/demo://logo.png"] == (
        "image/png"
    )
    assert [t.uri_template for t in templates] == [
        "toolsearch://one/greeting://{who}",
        "toolsearch://two/greeting://{who}",
    ]


def test_a_read_through_the_proxy_gives_the_upstream_contents(proxy):
    async def direct():
        async with Client(upstream("two"), read_timeout_seconds=30) as client:
            return [
                (await client.read_resource(uri)).contents[0]
                for uri in ("demo://readme", "demo://logo.png")
            ]

    async def scenario(client):
        return [
            (await client.read_resource(uri)).contents[0]
            for uri in ("toolsearch://two/demo://readme", "toolsearch://two/demo://logo.png")
        ]

    expected = asyncio.run(asyncio.wait_for(direct(), 60))
    text, blob = with_client(proxy, scenario)
    assert text.text == expected[0].text == "readme of two"
    assert blob.blob == expected[1].blob
    assert (text.mime_type, blob.mime_type) == (expected[0].mime_type, expected[1].mime_type)
    # the contents' URIs are the proxy's too, so they can be read again
    assert (text.uri, blob.uri) == (
        "toolsearch://two/demo://readme",
        "toolsearch://two/demo://logo.png",
    )


def test_an_expanded_template_reads_from_its_server(proxy):
    async def scenario(client):
        return (
            await client.read_resource("toolsearch://one/greeting://Ada"),
            # a client may lowercase the host part of the URI
            await client.read_resource("TOOLSEARCH://Two/greeting://Lin"),
        )

    one, two = with_client(proxy, scenario)
    assert one.contents[0].text == "hello Ada from one"
    assert two.contents[0].text == "hello Lin from two"
    assert two.contents[0].uri == "toolsearch://two/greeting://Lin"


def errors(client, calls):
    async def collect():
        found = []
        for call in calls:
            with pytest.raises(MCPError) as caught:
                await call(client)
            found.append(caught.value.error)
        return found

    return collect()


def test_unknown_uris_and_prompts_are_invalid_params_errors(proxy):
    async def scenario(client):
        return await errors(
            client,
            [
                lambda c: c.read_resource("demo://readme"),  # the upstream's own URI
                lambda c: c.read_resource("toolsearch://nobody/demo://readme"),
                lambda c: c.read_resource("toolsearch://one"),
                lambda c: c.read_resource("toolsearch://one/demo://missing"),
                lambda c: c.get_prompt("greet", {"person": "Ada"}),  # clashing: prefixed only
                lambda c: c.get_prompt("no_such_prompt"),
            ],
        )

    foreign, nobody, empty, missing, unprefixed, unknown = with_client(proxy, scenario)
    assert {e.code for e in (foreign, nobody, empty, missing, unprefixed, unknown)} == {
        INVALID_PARAMS
    }
    assert "toolsearch://<server>/<uri>" in foreign.message
    assert "'nobody'" in nobody.message
    assert "one, two" in nobody.message
    assert "no URI after" in empty.message
    assert missing.message.startswith("MCP server 'one': ")  # the upstream's own error
    assert "demo://missing" in missing.message
    assert "'greet'" in unprefixed.message
    assert "prompts/list" in unknown.message


def test_a_prompt_not_listed_yet_is_found(proxy):
    """A client may get a prompt it knows by name without listing first."""
    fresh = Passthrough(proxy.provider)  # has listed nothing
    result = asyncio.run(fresh.get_prompt("about_two", None))
    assert result.messages[0].content.text == "Tell me about the server two."


def test_no_server_with_prompts_or_resources_advertises_neither():
    with McpToolProvider({"tools": {"command": sys.executable, "args": [str(TOOLS)]}}) as provider:
        search_proxy = McpSearchProxy(provider, index="regex")
        asyncio.run(search_proxy.start())

        async def scenario(client):
            capabilities = client.server_capabilities
            with pytest.raises(MCPError) as caught:
                await client.list_prompts()
            return capabilities, caught.value.error.code

        capabilities, code = with_client(search_proxy, scenario)
    assert capabilities.prompts is None
    assert capabilities.resources is None
    assert capabilities.tools is not None
    assert code == METHOD_NOT_FOUND


def test_a_server_whose_listing_fails_is_left_out(caplog):
    """``two`` advertises prompts and resources, but its lists fail: skipped, logged."""
    broken = passthrough("two")
    broken["args"].append("--broken")
    with McpToolProvider({"one": passthrough("one"), "two": broken}) as provider:
        search_proxy = McpSearchProxy(provider, index="regex")
        asyncio.run(search_proxy.start())

        async def scenario(client):
            return (
                (await client.list_prompts()).prompts,
                (await client.list_resources()).resources,
                (await client.list_resource_templates()).resource_templates,
            )

        with caplog.at_level(logging.WARNING, logger="toolsearch.mcp.passthrough"):
            prompts, resources, templates = with_client(search_proxy, scenario)
    assert [p.name for p in prompts] == ["greet", "about_one"]  # no clash left
    assert [r.uri for r in resources] == [
        "toolsearch://one/demo://readme",
        "toolsearch://one/demo://logo.png",
    ]
    assert [t.uri_template for t in templates] == ["toolsearch://one/greeting://{who}"]
    assert "two cannot list anything today" in caplog.text


def test_the_command_line_proxy_forwards_prompts_and_resources(tmp_path: Path):
    config = tmp_path / "servers.toml"
    config.write_text(
        "\n".join(
            [
                "[servers.one]",
                f"command = {json.dumps(sys.executable)}",
                f"args = [{json.dumps(str(PASSTHROUGH))}, '--name', 'one']",
                "[servers.tools]",
                f"command = {json.dumps(sys.executable)}",
                f"args = [{json.dumps(str(TOOLS))}]",
                "",
            ]
        )
    )
    command = cli_proxy(config)

    async def run():
        async with Client(command, read_timeout_seconds=30) as client:
            prompts = [p.name for p in (await client.list_prompts()).prompts]
            prompt = await client.get_prompt("greet", {"person": "Ada"})
            uris = [r.uri for r in (await client.list_resources()).resources]
            read = await client.read_resource(uris[0])
            return prompts, prompt.messages[0].content.text, uris, read.contents[0].text

    prompts, prompt, uris, text = asyncio.run(asyncio.wait_for(run(), 60))
    assert prompts == ["greet", "about_one"]
    assert prompt == "Write a warm greeting for Ada, signed one."
    assert uris == ["toolsearch://one/demo://readme", "toolsearch://one/demo://logo.png"]
    assert text == "readme of one"


# -- the rules, without servers --------------------------------------------------------------


@pytest.mark.parametrize(
    "uri",
    [
        "file:///home/me/notes.md",
        "https://example.com/a/b?q=1&r=%20x#part",
        "urn:isbn:0451450523",
        "db://Users/42",
        "toolsearch://inner/file:///nested",  # a proxy behind a proxy
        "greeting://{who}",  # a template stays a template
    ],
)
def test_the_uri_rewrite_reverses_exactly(uri):
    rewritten = proxy_uri("my-server.v2", uri)
    assert rewritten == f"toolsearch://my-server.v2/{uri}"
    assert split_proxy_uri(rewritten, ["other", "my-server.v2"]) == ("my-server.v2", uri)


def test_the_server_part_matches_case_insensitively_only_when_unambiguous():
    assert split_proxy_uri("toolsearch://github/x://y", ["GitHub"]) == ("GitHub", "x://y")
    assert split_proxy_uri("toolsearch://A/x://y", ["a", "A"]) == ("A", "x://y")
    with pytest.raises(ValueError, match="no MCP server 'B'"):
        split_proxy_uri("toolsearch://B/x://y", ["b1", "bb"])
    with pytest.raises(ValueError, match="no MCP server 'ab'"):
        split_proxy_uri("toolsearch://ab/x://y", ["Ab", "aB"])  # which one is not clear


def test_prompt_names_follow_the_tool_naming_rule():
    candidates = [("one", "greet"), ("one", "about"), ("two", "greet")]
    assert list(exposed_names(candidates, "auto", "__")) == ["one__greet", "about", "two__greet"]
    assert list(exposed_names(candidates, "always", "__")) == [
        "one__greet",
        "one__about",
        "two__greet",
    ]
    assert exposed_names(candidates, "never", "__") == {
        "greet": ("one", "greet"),
        "about": ("one", "about"),
    }


def test_a_second_client_is_answered_while_a_first_sends_a_1_mb_uri(proxy):
    """Every error and log record of the proxy passes the secret scrubber, which once took
    quadratic time on a long run of word characters: a 1 MB ``resources/read`` URI kept the
    proxy busy for minutes and every other client waited. Now the hostile request fails on
    its own, with an error of bounded size, and a second client's search is answered."""
    hostile = "toolsearch://one/" + "a" * 1_000_000

    async def first() -> MCPError:
        async with Client(proxy.build_server()) as client:
            with pytest.raises(MCPError) as caught:
                await client.read_resource(hostile)
            return caught.value

    async def second() -> list[str]:
        async with Client(proxy.build_server()) as client:
            await asyncio.sleep(0.05)  # the first request is under way
            found = await client.call_tool("search_tools", {"query": "weather forecast"})
            return [t["name"] for t in json.loads(found.content[0].text)["tools"]]

    async def both() -> tuple[MCPError, list[str]]:
        return await asyncio.wait_for(asyncio.gather(first(), second()), 120)

    error, names = asyncio.run(both())
    assert error.code == INVALID_PARAMS
    assert len(error.message) < 10_000  # the URI is not echoed back whole
    assert names  # the second client got its answer
