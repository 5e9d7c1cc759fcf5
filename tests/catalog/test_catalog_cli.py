"""``toolsearch index build|search|info``: what users type, what they see, the exit codes."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("typer", reason="the command line needs toolsearch[catalog]")
pytest.importorskip("tantivy", reason="catalog indexes need toolsearch[bm25]")
pytest.importorskip("faiss", reason="catalog indexes need toolsearch[vector]")

from typer.testing import CliRunner

from toolsearch.cli import _app


@pytest.fixture
def runner() -> CliRunner:
    # wide enough that no table value wraps: these tests read what is shown; the layout
    # at 80 columns has tests of its own (test_*_fit_80_columns)
    return CliRunner(env={"COLUMNS": "200"})


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
    assert no_index.exit_code == 2  # a missing index is bad input too
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


# -- output at 80 columns ---------------------------------------------------------------

LONG_NAME = "weather_" + "x" * 92  # 100 characters: longer than any tool column at 80
WIDE_TOOLS = [
    {
        "name": "weather_get_forecast",
        "description": "Get the weather forecast for a city: hourly temperatures, wind "
        "speed, precipitation and the alerts of the national weather service for it.",
    },
    {
        "name": "weather_alerts_list_for_region_by_state",  # 39 characters: fits
        "description": "List the weather alerts of a region, see "
        "https://api.weather.example/v1/alerts/active?area=region&severity=all",
    },
    {"name": LONG_NAME, "description": "A weather tool with a very long name."},
]


def _table_rows(output: str) -> list[list[str]]:
    """The body rows of a rich table, each cell's wrapped lines joined without spaces."""
    rows: list[list[str]] = []
    for line in output.splitlines():
        if not line.startswith("│"):
            continue
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        if cells[0] or not rows:
            rows.append(cells)
        else:
            rows[-1] = [a + b for a, b in zip(rows[-1], cells, strict=True)]
    return rows


def _assert_fits(output: str, width: int = 80) -> None:
    wide = [line for line in output.splitlines() if len(line) > width]
    assert not wide, "\n".join(wide)
    assert "…" not in output


def test_search_tables_fit_80_columns(runner, tmp_path):
    catalog = tmp_path / "wide.jsonl"
    catalog.write_text("\n".join(json.dumps(t) for t in WIDE_TOOLS) + "\n", encoding="utf-8")
    out = tmp_path / "wide"
    assert invoke(runner, "build", str(catalog), "--out", str(out)).exit_code == 0
    found = runner.invoke(
        _app(), ["index", "search", str(out), "weather", "-k", "5"], env={"COLUMNS": "80"}
    )
    assert found.exit_code == 0, found.output
    _assert_fits(found.output)
    header = next(line for line in found.output.splitlines() if line.startswith("┃"))
    _, tool, _, summary = (len(cell) - 2 for cell in header.split("┃")[1:-1])
    assert tool >= len(WIDE_TOOLS[1]["name"])  # the summary gave way to the name
    assert summary >= 20
    rows = _table_rows(found.output)
    assert sorted(row[1] for row in rows) == sorted(t["name"] for t in WIDE_TOOLS)
    lines = found.output.splitlines()
    for spec in WIDE_TOOLS:
        name = spec["name"]
        if len(name) <= tool:  # whole on one line, not folded
            assert any(name in line for line in lines), name
    for row in rows:  # the rank and the score on one line each, never wrapped
        assert re.fullmatch(r"\d+", row[0])
        assert re.fullmatch(r"\d+\.\d{3}", row[2])


def test_info_tables_fit_80_columns(runner, catalog, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ("build", catalog.name, "--kind", "hybrid", "--embedder", "hashing-32")
    assert invoke(runner, *args, "--out", "indexes/demo").exit_code == 0
    shown = runner.invoke(_app(), ["index", "info", "indexes/demo"], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    _assert_fits(shown.output)
    values = {}
    field = ""
    for line in shown.output.splitlines():
        if line.startswith("│"):
            name, value = (cell.strip() for cell in line.split("│")[1:-1])
            field = name or field
            values[field] = f"{values.get(field, '')} {value}".strip()
    assert values["rebuild"] == (
        "toolsearch index build tools.jsonl --kind hybrid --out indexes/demo --embedder hashing-32"
    )
    assert values["bm25 settings"].startswith("k1 1.2, b 0.75; field weights: name")


# -- build progress ---------------------------------------------------------------------

_COUNT = re.compile(r"^\[build\] (?P<label>[a-z ]+?) (?P<done>[\d,]+)(?: of (?P<total>[\d,]+))?")


def _counts(output: str) -> dict[str, list[tuple[int, int | None]]]:
    """Every count line of a build log, by stage label: (done, total)."""
    seen: dict[str, list[tuple[int, int | None]]] = {}
    for line in output.splitlines():
        match = _COUNT.match(line)
        if match:
            total = match["total"]
            seen.setdefault(match["label"], []).append(
                (int(match["done"].replace(",", "")), total and int(total.replace(",", "")))
            )
    return seen


def test_a_build_log_counts_every_stage_up_to_its_real_total(runner, tmp_path, monkeypatch):
    """stderr is not a terminal: count lines (here on every report) whose done never passes
    the total, and each stage's last line at done == total. 1,300 lines, the last 20
    repeating names: 1,300 tools analyzed, 1,280 embedded."""
    from toolsearch.catalog.cli import output as catalog_cli

    monkeypatch.setattr(catalog_cli, "LOG_EVERY", 0.0)
    names = [f"tool_{i}" for i in range(1280)] + [f"tool_{i}" for i in range(20)]
    catalog = tmp_path / "many.jsonl"
    catalog.write_text(
        "".join(json.dumps({"name": n, "description": f"Does {n}."}) + "\n" for n in names),
        encoding="utf-8",
    )
    args = ("build", str(catalog), "--kind", "hybrid", "--embedder", "hashing-32")
    built = invoke(runner, *args, "--batch-size", "100", "--out", str(tmp_path / "many"))
    assert built.exit_code == 0, built.output
    assert "of 100" not in built.output
    counts = _counts(built.output)
    assert set(counts) == {"tools analyzed", "tools embedded", "vectors indexed"}
    for label, lines in counts.items():
        assert all(total is not None and done <= total for done, total in lines), (label, lines)
        assert lines[-1][0] == lines[-1][1], (label, lines)
        assert [done for done, _ in lines] == sorted(done for done, _ in lines)
    assert counts["tools analyzed"][-1] == (1300, 1300)
    assert counts["tools analyzed"][0][1] == 1300  # the total is known from the start
    assert len(counts["tools embedded"]) > 5  # a line per batch of 100
    assert counts["tools embedded"][-1] == (1280, 1280)
    assert "[build] loading the embedding model: done in " in built.output


def test_the_progress_callback_never_counts_past_a_total(tmp_path):
    from toolsearch.catalog import CatalogIndex
    from toolsearch.indexes.params import VectorParams

    names = [f"tool_{i}" for i in range(1100)] + ["tool_1", "tool_2"]
    catalog = tmp_path / "many.jsonl"
    catalog.write_text(
        "".join(json.dumps({"name": n, "description": f"Does {n}."}) + "\n\n" for n in names),
        encoding="utf-8",
    )  # blank lines between the records: not tools
    calls: list[tuple[str, int, int | None]] = []
    CatalogIndex.build(
        [str(catalog)],
        kind="vector",
        embedder="hashing-16",
        out=tmp_path / "index",
        vector=VectorParams(batch_size=64),
        progress=lambda stage, done, total: calls.append((stage, done, total)),
    )
    last: dict[str, tuple[int, int | None]] = {}
    for stage, done, total in calls:
        assert total is None or done <= total, (stage, done, total)
        last[stage] = (done, total)
    assert last == {
        "model": (1, 1),
        "tools": (1102, 1102),
        "embedded": (1100, 1100),
        "indexing": (1100, 1100),
    }


def test_build_log_lines_come_at_most_every_ten_seconds_with_rate_and_eta():
    from toolsearch.catalog.cli.output import BuildLog

    now = [100.0]
    lines: list[str] = []
    log = BuildLog(lines.append, clock=lambda: now[0])
    for second in range(0, 51):  # 100 tools a second, a report every second
        now[0] = 100.0 + second
        log("embedded", second * 100, 5000)
    assert lines[0] == "[build] tools embedded ..."
    assert lines[1:] == [
        "[build] tools embedded 1,000 of 5,000 (20 %, 100/s, ETA 40 s)",
        "[build] tools embedded 2,000 of 5,000 (40 %, 100/s, ETA 30 s)",
        "[build] tools embedded 3,000 of 5,000 (60 %, 100/s, ETA 20 s)",
        "[build] tools embedded 4,000 of 5,000 (80 %, 100/s, ETA 10 s)",
        "[build] tools embedded 5,000 of 5,000 in 50 s (100/s)",
    ]
    log("embedded", 5000, 5000)  # an ended stage says nothing more
    now[0] += 3.5
    log("tools", 0, None)
    now[0] += 2
    log("tools", 512, None)  # within 10 s of the stage's first line: nothing yet
    log.close()  # the count the log has not shown yet
    assert lines[-2:] == ["[build] tools analyzed ...", "[build] tools analyzed 512 (256/s)"]
    log.close()
    assert lines[-1] == "[build] tools analyzed 512 (256/s)"  # written once


def test_a_terminal_shows_counts_without_a_made_up_total_and_an_eta_with_one():
    """The ``2,049 of 100`` of a JSONL build: rich's add_task defaults to a total of 100,
    which a stage without a total kept."""
    from rich.console import Console

    from toolsearch.catalog.cli.output import build_progress as _build_progress

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=80, color_system=None)
    with _build_progress(console) as report:
        report("tools", 0, None)
        report("tools", 2049, None)
        for done in (0, 1000, 2000):
            report("embedded", done, 5000)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    assert "tools analyzed" in shown
    assert "2,049" in shown
    assert "of 100" not in shown
    assert "2,000 of 5,000" in shown
    assert "ETA " in shown
