"""``toolsearch index build|search|info``: what users type, what they see, the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("typer", reason="the command line needs toolsearch[catalog]")
pytest.importorskip("tantivy", reason="catalog indexes need toolsearch[bm25]")
pytest.importorskip("faiss", reason="catalog indexes need toolsearch[vector]")

from typer.testing import CliRunner

from toolsearch.cli import _app


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def invoke(runner: CliRunner, *args: str):
    return runner.invoke(_app(), ["index", *args], catch_exceptions=False)


def test_build_search_info(runner, catalog, tmp_path):
    out = tmp_path / "indexes" / "demo"
    built = invoke(runner, "build", str(catalog), "--kind", "bm25", "--out", str(out))
    assert built.exit_code == 0, built.output
    assert "3 tools" in built.output
    searched = invoke(runner, "search", str(out), "refund a payment", "-k", "2")
    assert searched.exit_code == 0, searched.output
    assert "billing_refund_payment" in searched.output
    assert searched.output.index("billing_refund_payment") < searched.output.find("weather") or (
        "weather" not in searched.output
    )
    exact = invoke(runner, "search", str(out), "calendar_create_event", "-k", "1")
    assert "calendar_create_event" in exact.output
    info = invoke(runner, "info", str(out), "--verify")
    assert info.exit_code == 0, info.output
    for text in ("bm25", "verified", "toolsearch index build", str(catalog)):
        assert text in info.output


def test_hybrid_build_with_an_embedder_and_an_incremental_rebuild(runner, catalog, tmp_path):
    out = tmp_path / "hybrid"
    args = ("build", str(catalog), "--kind", "hybrid", "--embedder", "hashing-32", "--out")
    first = invoke(runner, *args, str(out))
    assert first.exit_code == 0, first.output
    assert "3 embedded, 0 reused" in first.output
    again = invoke(runner, *args, str(out))
    assert "0 embedded, 3 reused" in again.output
    info = invoke(runner, "info", str(out))
    assert "hashing-32 (32-d)" in info.output
    searched = invoke(runner, "search", str(out), "weather forecast")
    assert "weather_get_forecast" in searched.output


def test_user_errors_exit_cleanly(runner, catalog, tmp_path):
    missing_source = invoke(runner, "build", str(tmp_path / "nope.jsonl"), "--out", "x")
    assert missing_source.exit_code == 2
    assert "no such file" in missing_source.output
    bad_kind = invoke(runner, "build", str(catalog), "--kind", "fuzzy", "--out", "x")
    assert bad_kind.exit_code == 2
    assert "bm25, vector, hybrid" in bad_kind.output
    pointless = invoke(runner, "build", str(catalog), "--embedder", "minilm", "--out", "x")
    assert pointless.exit_code == 2
    assert "bm25 index embeds nothing" in pointless.output
    bad_embedder = invoke(
        runner, "build", str(catalog), "--kind", "vector", "--embedder", "nope", "--out",
        str(tmp_path / "v"),
    )  # fmt: skip
    assert bad_embedder.exit_code == 2  # bad input exits 2, as toolsearch bench does
    assert "unknown embedder" in bad_embedder.output
    no_index = invoke(runner, "search", str(tmp_path / "none"), "weather")
    assert no_index.exit_code == 1
    assert "toolsearch index build" in no_index.output
    assert "Traceback" not in no_index.output
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n", encoding="utf-8")
    bad_source = invoke(runner, "build", str(broken), "--out", str(tmp_path / "b"))
    assert bad_source.exit_code == 2
    assert "broken.jsonl" in bad_source.output


def test_corrupted_and_mismatched_indexes_say_how_to_rebuild(runner, catalog, tmp_path):
    out = tmp_path / "idx"
    assert invoke(runner, "build", str(catalog), "--out", str(out)).exit_code == 0
    postings = out / "bm25_tfs.npy"
    data = bytearray(postings.read_bytes())
    data[-1] ^= 0xFF
    postings.write_bytes(bytes(data))
    plain = invoke(runner, "info", str(out))  # a small index is checksummed on every load
    assert plain.exit_code == 1
    assert "sha256" in plain.output
    verified = invoke(runner, "info", str(out), "--verify")
    assert verified.exit_code == 1
    assert "sha256" in verified.output
    assert f"toolsearch index build {catalog} --kind bm25 --out {out}" in " ".join(
        verified.output.split()
    )
    manifest = out / "manifest.json"
    record = json.loads(manifest.read_text(encoding="utf-8"))
    record["format_version"] = 99
    manifest.write_text(json.dumps(record), encoding="utf-8")
    newer = invoke(runner, "search", str(out), "weather")
    assert newer.exit_code == 1
    assert "format 99" in newer.output


def test_builds_from_mcp_dumps_and_openapi_specs(runner, tmp_path):
    pytest.importorskip("toolsearch.catalog.sources", reason="catalog sources module")
    dump = tmp_path / "github.json"
    dump.write_text(
        json.dumps(
            {
                "tools": [
                    {
                        "name": "create_issue",
                        "description": "Open an issue in a repository",
                        "inputSchema": {"type": "object", "properties": {"title": {}}},
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    spec = tmp_path / "pets.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.0",
                "info": {"title": "Pet store", "version": "1"},
                "paths": {
                    "/pets/{petId}": {
                        "get": {
                            "operationId": "getPetById",
                            "summary": "Find a pet by its id",
                            "parameters": [
                                {"name": "petId", "in": "path", "required": True,
                                 "schema": {"type": "string"}}
                            ],
                        }
                    }
                },
            }
        ),
        encoding="utf-8",
    )  # fmt: skip
    out = tmp_path / "mixed"
    built = invoke(runner, "build", str(dump), str(spec), "--out", str(out))
    assert built.exit_code == 0, built.output
    assert "2 tools" in built.output
    found = invoke(runner, "search", str(out), "find a pet", "-k", "1")
    assert "getPetById" in found.output
    found = invoke(runner, "search", str(out), "open an issue", "-k", "1")
    assert "create_issue" in found.output


def test_error_text_with_brackets_is_printed_as_is(runner, catalog, tmp_path, monkeypatch):
    """Rich markup must not eat "[vector]" from "pip install 'toolsearch[vector]'"."""
    from toolsearch.catalog import index as catalog_index
    from toolsearch.errors import MissingExtraError

    def missing(*args, **kwargs):
        raise MissingExtraError("vector catalog indexes", "vector", "faiss-cpu")

    monkeypatch.setattr(catalog_index.CatalogIndex, "build", missing)
    result = invoke(runner, "build", str(catalog), "--out", str(tmp_path / "[v]"))
    assert result.exit_code == 2
    assert "pip install 'toolsearch[vector]'" in result.output
    assert "Traceback" not in result.output


def test_search_output_and_info_settings(runner, catalog, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = Path("[demo]")  # brackets: not rich markup
    args = ("build", str(catalog), "--kind", "hybrid", "--embedder", "hashing-32", "--out")
    assert invoke(runner, *args, str(out)).exit_code == 0
    found = invoke(runner, "search", str(out), "refund", "-k", "1")
    assert found.exit_code == 0, found.output
    head = found.output.splitlines()[0]
    assert head.startswith("3 matches for 'refund' in ")
    assert "[demo] (3 tools, " in head
    assert "billing_refund_payment" in found.output
    keywords = tmp_path / "keywords"
    assert invoke(runner, "build", str(catalog), "--out", str(keywords)).exit_code == 0
    nothing = invoke(runner, "search", str(keywords), "xyzzy")
    assert nothing.exit_code == 0
    assert nothing.output.startswith("0 matches for 'xyzzy'")
    info = " ".join(invoke(runner, "info", str(out)).output.split())
    for text in ("bm25 settings", "k1 1.2", "fusion", "rrf (k ", "--out '[demo]'"):
        assert text in info, text


def test_main_without_typer_names_the_extras(monkeypatch, capsys):
    import builtins

    from toolsearch import cli

    real_import = builtins.__import__

    def no_typer(name, *args, **kwargs):
        if name == "typer" or name.startswith("typer."):
            raise ModuleNotFoundError("No module named 'typer'", name="typer")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_typer)
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 2
    message = capsys.readouterr().err
    assert "typer" in message
    assert "toolsearch[catalog]" in message


def test_a_build_logs_a_line_per_stage_and_times_the_model_loading(runner, catalog, tmp_path):
    """Output to a log (not a terminal): a line per stage as it starts, the model included,
    and the reported time covers the whole build."""
    out = tmp_path / "vector"
    args = ("build", str(catalog), "--kind", "vector", "--embedder", "hashing-32")
    built = invoke(runner, *args, "--out", str(out))
    assert built.exit_code == 0, built.output
    stages = [line for line in built.output.splitlines() if line.startswith("[build] ")]
    assert stages[0] == "[build] loading the embedding model ..."
    assert "[build] tools embedded ..." in stages
    assert "built " in built.output.splitlines()[-1]


def test_build_stages_reach_the_progress_callback_model_first(tmp_path):
    from toolsearch import ToolDefinition
    from toolsearch.catalog import CatalogIndex

    stages: list[str] = []
    CatalogIndex.build(
        [ToolDefinition(name="weather_get_forecast", description="Weather for a city.")],
        kind="vector",
        embedder="hashing-32",
        out=tmp_path / "index",
        progress=lambda stage, done, total: stages.append(stage),
    )
    assert stages[0] == "model"
    assert "embedded" in stages
