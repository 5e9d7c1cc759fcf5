"""`toolsearch bench` end to end on the bundled catalog (one index, no peers, one run)."""

import json

import pytest

typer_testing = pytest.importorskip("typer.testing", reason="typer is not installed ([bench])")
pytest.importorskip("bpe_openai", reason="bpe-openai is not installed ([bench])")
pytest.importorskip("tantivy", reason="tantivy is not installed ([bm25])")


def test_bench_writes_the_report_the_json_and_prints_the_table(tmp_path):
    from toolsearch.cli import _app

    json_path = tmp_path / "records.json"
    result = typer_testing.CliRunner().invoke(
        _app(),
        [
            "bench",
            "--index",
            "bm25",
            "--no-peers",
            "--runs",
            "1",
            "--out",
            str(tmp_path / "out"),
            "--json",
            str(json_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "tool search vs the full tool loop" in result.output
    records = json.loads(json_path.read_text())["records"]
    by_mode = {r["mode"]: r for r in records}
    assert set(by_mode) == {"full", "search"}
    search = by_mode["search"]
    for key in (
        "dataset",
        "mode",
        "index",
        "prompt_tokens_mean",
        "savings_pct",
        "success_rate",
        "recall_at_5",
        "p50_us",
    ):
        assert key in search
    assert search["dataset"] == "acme"
    assert search["savings_pct"] > 80
    assert 0 < search["success_rate"] <= 100
    assert by_mode["full"]["success_rate"] == 100.0
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| search | bm25 |" in report


def test_bench_rejects_an_unknown_dataset(tmp_path):
    from toolsearch.cli import _app

    result = typer_testing.CliRunner().invoke(
        _app(), ["bench", "--dataset", "nope", "--out", str(tmp_path)]
    )
    assert result.exit_code != 0
    assert "unknown dataset" in result.output
