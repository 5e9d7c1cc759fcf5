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
    assert search["peak_rss_mb"] is not None
    assert search["peak_rss_mb"] >= 0
    assert by_mode["full"]["peak_rss_mb"] is None
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| search | bm25 |" in report
    assert "peak MB" in report


def test_bench_rejects_an_unknown_dataset(tmp_path):
    from toolsearch.cli import _app

    result = typer_testing.CliRunner().invoke(
        _app(), ["bench", "--dataset", "nope", "--out", str(tmp_path)]
    )
    assert result.exit_code != 0
    assert "unknown dataset" in result.output


@pytest.mark.parametrize(
    ("index", "message"), [("nope", "unknown index"), ("hybrid:nope", "unknown embedder")]
)
def test_bench_rejects_an_unknown_index_or_embedder(tmp_path, index, message):
    from toolsearch.cli import _app

    result = typer_testing.CliRunner().invoke(
        _app(), ["bench", "--index", index, "--no-peers", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_bench_runs_a_user_catalog_from_jsonl(tmp_path):
    from toolsearch.bench.data import Catalog, Query, QuerySet
    from toolsearch.bench.loaders import load_bundled
    from toolsearch.cli import _app

    catalog, _ = load_bundled()
    mine = Catalog("mine", catalog.tools[:30])
    first = mine.tools[0]
    queries = QuerySet("mine", (Query("q1", first.description, (first.name,)),))
    mine.to_jsonl(tmp_path / "mine.jsonl")
    queries.to_jsonl(tmp_path / "requests.jsonl")
    result = typer_testing.CliRunner().invoke(
        _app(),
        [
            "bench",
            "--catalog",
            str(tmp_path / "mine.jsonl"),
            "--queries",
            str(tmp_path / "requests.jsonl"),
            "--index",
            "bm25",
            "--no-peers",
            "--no-memory",
            "--runs",
            "1",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    records = json.loads((tmp_path / "out" / "results.json").read_text())["records"]
    assert all(r["peak_rss_mb"] is None for r in records)
    assert {r["dataset"] for r in records} == {"mine"}
    assert next(r for r in records if r["mode"] == "search")["success_rate"] == 100.0


def test_live_without_credentials_says_which_variable_and_exits_2(tmp_path, monkeypatch):
    from toolsearch.cli import _app

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = typer_testing.CliRunner().invoke(
        _app(), ["bench", "--live", "openai:gpt-4o-mini", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "live.json").exists()


def test_live_rejects_a_spec_without_a_model(tmp_path):
    from toolsearch.cli import _app

    result = typer_testing.CliRunner().invoke(
        _app(), ["bench", "--live", "openai", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "PROVIDER:MODEL" in result.output


def test_live_runs_the_tasks_through_the_injected_model(tmp_path, monkeypatch):
    from toolsearch.bench import live as live_module
    from toolsearch.bench.data import Catalog, Query, QuerySet
    from toolsearch.bench.loaders import load_bundled
    from toolsearch.chat.messages import AssistantMessage, ToolCall
    from toolsearch.cli import _app
    from toolsearch.models import FunctionChatModel

    catalog, _ = load_bundled()
    mine = Catalog("mine", catalog.tools[:20])
    first = mine.tools[0]
    QuerySet("mine", (Query("q1", first.description, (first.name,)),)).to_jsonl(
        tmp_path / "q.jsonl"
    )
    mine.to_jsonl(tmp_path / "mine.jsonl")

    def script(messages, tools):  # calls the gold tool when visible, else answers
        if any(t.name == first.name for t in tools) and len(messages) <= 2:
            return AssistantMessage(tool_calls=[ToolCall(id="1", name=first.name, arguments="{}")])
        return "done"

    def factory_for(spec, environ=None):
        def factory():
            return FunctionChatModel(script)

        factory.__name__ = spec
        return factory

    monkeypatch.setattr(live_module, "provider_model_factory", factory_for)
    result = typer_testing.CliRunner().invoke(
        _app(),
        [
            "bench",
            "--live",
            "openai:scripted",
            "--catalog",
            str(tmp_path / "mine.jsonl"),
            "--queries",
            str(tmp_path / "q.jsonl"),
            "--index",
            "regex",
            "--no-peers",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "live: tool search vs the full tool loop (openai:scripted)" in result.output
    records = json.loads((tmp_path / "out" / "live.json").read_text())["live_records"]
    assert [(r["mode"], r["index"]) for r in records] == [("full", "-"), ("search", "regex")]
    assert records[0]["success_rate"] == 100.0
    assert records[0]["model"] == "openai:scripted"
    assert "synthetic" in (tmp_path / "out" / "live.md").read_text()


def test_bench_max_rounds_default_is_the_query_policys():
    """The option repeats QueryPolicy's default for --help; the two must not drift apart."""
    import inspect

    from toolsearch.bench.agent import QueryPolicy
    from toolsearch.cli import _app

    bench = next(c for c in _app().registered_commands if c.callback.__name__ == "bench")
    option = inspect.signature(bench.callback).parameters["max_rounds"].default
    assert option.default == QueryPolicy().max_rounds
