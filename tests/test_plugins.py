"""Rows of the extension tables from installed distributions (toolsearch.plugins): a
provider and a command registered by entry point are known by name, a broken one fails
alone with a PluginError naming its distribution, and a plugin never replaces a built-in.

Each test puts a distribution's metadata (``*.dist-info`` with ``entry_points.txt``) and
its module in a temporary folder on ``sys.path``, as ``pip install --target`` would."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolsearch import plugins
from toolsearch.errors import PluginError

MODULE = '''
import typer

from toolsearch.models.providers import PROVIDERS
from toolsearch.indexes import IndexKindRow
import dataclasses

ROW = dataclasses.replace(PROVIDERS[0], name="acme-chat", otel_name="acme")
MISNAMED = dataclasses.replace(PROVIDERS[0], name="other")
NOT_A_ROW = "a string"
KIND = IndexKindRow(
    "sneaky", "toolsearch.indexes.lexical.regex:RegexToolIndex", (), "x", catalog=True
)


def hello_app():
    app = typer.Typer()

    @app.command()
    def hello(name: str = "world") -> None:
        """Say hello (a command from another distribution)."""
        print(f"hello {name}")

    return app
'''


def install(folder: Path, groups: dict[str, dict[str, str]]) -> None:
    """A distribution ``acme-plugins`` with ``acme_plugins.py`` and these entry points."""
    (folder / "acme_plugins.py").write_text(textwrap.dedent(MODULE))
    info = folder / "acme_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-plugins\nVersion: 1.0\n")
    lines = []
    for group, points in groups.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "_warned", set())  # each test's plugins warn afresh
    yield tmp_path
    import sys

    sys.modules.pop("acme_plugins", None)


def test_a_provider_registered_by_entry_point_is_known_by_name(site: Path) -> None:
    from toolsearch.models.providers import provider, provider_names
    from toolsearch.search.sessions import name_rule

    install(site, {plugins.PROVIDERS_GROUP: {"acme-chat": "acme_plugins:ROW"}})
    assert provider("acme-chat").otel_name == "acme"
    assert provider_names()[-1] == "acme-chat"
    assert name_rule("acme-chat") == provider("openai").names
    with pytest.raises(ValueError, match="acme-chat"):
        provider("nope")  # the message lists the installed provider too


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("no_such_module:ROW", "ModuleNotFoundError"),
        ("acme_plugins:MISSING", "AttributeError"),
        ("acme_plugins:NOT_A_ROW", "names a str, not a ProviderRow"),
        ("acme_plugins:MISNAMED", "its row is named 'other'"),
    ],
)
def test_a_broken_provider_fails_alone_naming_its_distribution(
    site: Path, value: str, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    from toolsearch.models.providers import provider, provider_names

    install(site, {plugins.PROVIDERS_GROUP: {"acme-chat": value}})
    with pytest.raises(PluginError) as raised:
        provider("acme-chat")
    assert raised.value.distribution == "acme-plugins"
    assert raised.value.name == "acme-chat"
    assert problem in str(raised.value)
    assert "'acme-plugins'" in str(raised.value)
    with caplog.at_level(logging.WARNING):
        assert provider_names() == ("openai", "openai-responses", "anthropic", "gemini")
        provider_names()  # every help text lists: the warning is said once
    assert "acme-chat" in caplog.text
    assert len(caplog.records) == 1
    assert provider("openai").name == "openai"  # the built-ins never depend on a plugin


def test_a_plugin_never_replaces_a_built_in_name_and_catalog_kinds_are_toolsearchs(
    site: Path,
) -> None:
    from toolsearch.indexes import kinds
    from toolsearch.models.providers import provider

    install(
        site,
        {
            plugins.PROVIDERS_GROUP: {"openai": "acme_plugins:ROW"},
            plugins.INDEX_KINDS_GROUP: {"bm25": "acme_plugins:KIND", "sneaky": "acme_plugins:KIND"},
        },
    )
    assert provider("openai").otel_name == "openai"
    assert kinds.index_kind("bm25") is kinds.KINDS[1]
    with pytest.raises(PluginError, match="catalog=True is for toolsearch's own kinds"):
        kinds.index_kind("sneaky")
    assert "sneaky" not in kinds.kind_names()


def test_a_command_registered_by_entry_point_runs_as_toolsearch_name(site: Path) -> None:
    from toolsearch.cli import _app

    install(site, {plugins.CLI_GROUP: {"hello": "acme_plugins:hello_app"}})
    ran = CliRunner().invoke(_app(), ["hello", "--name", "acme"])
    assert ran.exit_code == 0, ran.output
    assert ran.output == "hello acme\n"
    listed = CliRunner().invoke(_app(), ["--help"])
    assert "Say hello (a command from another distribution)." in listed.output


def test_a_broken_command_fails_alone(site: Path) -> None:
    from toolsearch.cli import _app

    install(site, {plugins.CLI_GROUP: {"hello": "acme_plugins:NOT_A_ROW", "index": "x:y"}})
    listed = CliRunner().invoke(_app(), ["--help"], terminal_width=200)
    assert listed.exit_code == 0
    assert "hello" in listed.output
    assert "cannot be loaded" in listed.output
    ran = CliRunner().invoke(_app(), ["hello"])
    assert ran.exit_code == 1
    assert "acme-plugins" in " ".join(ran.output.split())
    assert CliRunner().invoke(_app(), ["index", "--help"]).exit_code == 0  # still the built-in


def test_nothing_is_read_until_a_name_is_not_built_in(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolsearch.indexes import kinds, make_index
    from toolsearch.models.providers import provider

    def refuse(group: str) -> tuple[plugins.Plugin, ...]:
        raise AssertionError(f"read the entry points of {group} for a built-in name")

    monkeypatch.setattr(plugins, "plugins", refuse)
    assert kinds.index_kind("regex").name == "regex"
    assert type(make_index("regex")).__name__ == "RegexToolIndex"
    assert provider("gemini").name == "gemini"
