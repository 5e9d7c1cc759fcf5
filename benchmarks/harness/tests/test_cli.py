"""`toolsearch bench` end to end on the bundled catalog (one index, no peers, one run)."""

import json
import os
import re

import pytest

typer_testing = pytest.importorskip("typer.testing", reason="typer is not installed (the harness)")
pytest.importorskip("bpe_openai", reason="bpe-openai is not installed (the harness)")
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
    from toolsearch.cli import _app
    from toolsearch_bench.data import Catalog, Query, QuerySet
    from toolsearch_bench.loaders import load_bundled

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
    from toolsearch.chat.messages import AssistantMessage, ToolCall
    from toolsearch.cli import _app
    from toolsearch.models import FunctionChatModel
    from toolsearch_bench import live as live_module
    from toolsearch_bench.data import Catalog, Query, QuerySet
    from toolsearch_bench.loaders import load_bundled

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

    def factory_for(spec, environ=None, base_url=None):
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
    title = "mine, live (openai:scripted): tool search vs the full tool loop"
    assert title in " ".join(result.output.split())  # the title wraps to the table's width
    records = json.loads((tmp_path / "out" / "live.json").read_text())["live_records"]
    assert [(r["mode"], r["index"]) for r in records] == [("full", "-"), ("search", "regex")]
    assert records[0]["success_rate"] == 100.0
    assert records[0]["model"] == "openai:scripted"
    assert "synthetic" in (tmp_path / "out" / "live.md").read_text()


def test_bench_max_rounds_default_is_the_query_policys():
    """The option repeats QueryPolicy's default for --help; the two must not drift apart."""
    import inspect

    from toolsearch_bench.agent import QueryPolicy
    from toolsearch_bench.cli import bench_app

    [bench] = bench_app().registered_commands
    option = inspect.signature(bench.callback).parameters["max_rounds"].default
    assert option.default == QueryPolicy().max_rounds


# --- a newcomer's view: errors, progress, where the results go, the table ---------------


def _small_catalog(tmp_path, *, tools=30, queries=2):
    """A catalog of the bundled catalog's first tools and requests answered by them."""
    from toolsearch_bench.data import Catalog, Query, QuerySet
    from toolsearch_bench.loaders import load_bundled

    catalog, _ = load_bundled()
    mine = Catalog("mine", catalog.tools[:tools])
    QuerySet(
        "mine",
        tuple(Query(f"q{i}", t.description, (t.name,)) for i, t in enumerate(mine.tools[:queries])),
    ).to_jsonl(tmp_path / "requests.jsonl")
    mine.to_jsonl(tmp_path / "mine.jsonl")
    return tmp_path / "mine.jsonl", tmp_path / "requests.jsonl"


def _invoke(args, **env):
    from toolsearch.cli import _app

    return typer_testing.CliRunner(env={"COLUMNS": "80", **env}).invoke(_app(), args)


def _bad_input(tmp_path, case):
    """The arguments of one bad input (files written into tmp_path)."""
    catalog, queries = _small_catalog(tmp_path)
    broken = tmp_path / "broken.jsonl"
    good_line = catalog.read_text().splitlines()[0]
    broken.write_text(good_line + "\n" + '{"name": "oops", description}\n')
    stray = tmp_path / "stray.jsonl"
    stray.write_text('{"id": "s1", "text": "book a flight", "gold": ["no_such_tool"]}\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    return {
        "tokenizer": ["--tokenizer", "nope"],
        "missing catalog": ["--catalog", str(tmp_path / "absent.jsonl"), "--queries", str(queries)],
        "malformed line": ["--catalog", str(broken), "--queries", str(queries)],
        "gold not in catalog": ["--catalog", str(catalog), "--queries", str(stray)],
        "empty queries": ["--catalog", str(catalog), "--queries", str(empty)],
        "catalog alone": ["--catalog", str(catalog)],
        "queries alone": ["--queries", str(queries)],
        "unknown dataset": ["--dataset", "nope"],
        "unknown index": ["--index", "nope"],
        "unknown embedder": ["--index", "hybrid:nope"],
        "unknown provider": ["--provider", "nope"],
    }[case]


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("tokenizer", "--tokenizer: unknown encoding 'nope'"),
        ("missing catalog", "absent.jsonl"),
        ("malformed line", "broken.jsonl:2: not valid JSON"),
        ("gold not in catalog", "no_such_tool"),
        ("empty queries", "empty.jsonl has no requests"),
        ("catalog alone", "--catalog needs --queries"),
        ("queries alone", "--queries needs --catalog"),
        ("unknown dataset", "unknown dataset 'nope'"),
        ("unknown index", "unknown index 'nope'"),
        ("unknown embedder", "unknown embedder 'nope'"),
        ("unknown provider", "--provider"),
    ],
)
def test_bench_bad_input_is_one_short_error_with_exit_code_2(tmp_path, case, message):
    out = tmp_path / "out"
    result = _invoke(["bench", *_bad_input(tmp_path, case), "--no-peers", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert 1 <= len(lines) <= 4, result.output  # one message, wrapped to 80 columns
    assert all(len(line) <= 80 or " " not in line for line in lines), result.output
    assert lines[0].startswith("error: ")
    assert message in result.output.replace("\n", " ")
    assert not out.exists()  # nothing written, nothing run


def test_bench_names_the_line_of_a_tool_that_is_not_valid(tmp_path):
    catalog, queries = _small_catalog(tmp_path)
    lines = catalog.read_text().splitlines()
    catalog.write_text("\n".join([lines[0], '{"name": "has space"}', *lines[1:]]) + "\n")
    result = _invoke(["bench", "--catalog", str(catalog), "--queries", str(queries)])
    assert result.exit_code == 2
    assert "mine.jsonl:2:" in result.output
    assert "whitespace" in result.output


def test_bench_catches_a_tool_named_twice_with_both_lines(tmp_path):
    catalog, queries = _small_catalog(tmp_path)
    lines = catalog.read_text().splitlines()
    catalog.write_text("\n".join([*lines, lines[0]]) + "\n")
    result = _invoke(["bench", "--catalog", str(catalog), "--queries", str(queries)])
    assert result.exit_code == 2
    assert f"mine.jsonl:{len(lines) + 1}: a second tool" in " ".join(result.output.split())
    assert "line 1" in result.output


def test_run_dataset_refuses_an_empty_query_set():
    from toolsearch.tokens import BpeTokenCounter
    from toolsearch_bench.data import Catalog, QuerySet
    from toolsearch_bench.loaders import load_bundled
    from toolsearch_bench.runner import run_dataset

    catalog, _ = load_bundled()
    with pytest.raises(ValueError, match="no queries"):
        run_dataset(
            Catalog("x", catalog.tools[:3]), QuerySet("x", ()), [], counter=BpeTokenCounter()
        )


def _run_small(tmp_path, *extra, env=None):
    catalog, queries = _small_catalog(tmp_path)
    return _invoke(
        [
            "bench",
            "--catalog",
            str(catalog),
            "--queries",
            str(queries),
            "--index",
            "bm25",
            "--runs",
            "2",
            *extra,
        ],
        **(env or {}),
    )


def test_bench_prints_one_line_per_phase_when_not_a_terminal(tmp_path):
    result = _run_small(tmp_path, "--no-peers", "--no-memory", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    progress = [line for line in result.output.splitlines() if line.startswith("[bench]")]
    assert progress == [
        line
        for line in progress
        if re.fullmatch(
            r"\[bench\] mine: .+ \.\.\. done in [0-9.]+ s|\[bench\] mine: done in .+", line
        )
    ]
    phases = [line.split(" ... ")[0] for line in progress]
    assert phases == [
        "[bench] mine: loading",
        "[bench] mine: full loop (2 tasks)",
        "[bench] mine: tool search: bm25 (2 tasks)",
        "[bench] mine: retrieval and latency: bm25 (2 x 2 queries)",
        "[bench] mine: done in " + progress[-1].split("done in ")[1],
    ]


def test_bench_progress_shows_the_memory_phase(tmp_path):
    result = _run_small(tmp_path, "--no-peers", "--runs", "1", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert re.search(
        r"^\[bench\] mine: memory: bm25 .* \.\.\. done in [0-9.]+ s$", result.output, re.M
    )


def test_bench_default_out_is_a_new_folder_outside_the_working_tree(tmp_path, monkeypatch):
    clone = tmp_path / "clone"
    clone.mkdir()
    monkeypatch.chdir(clone)
    cache = tmp_path / "cache"
    result = _run_small(
        tmp_path, "--no-peers", "--no-memory", env={"TOOLSEARCH_CACHE_DIR": str(cache)}
    )
    assert result.exit_code == 0, result.output
    assert list(clone.iterdir()) == []  # no benchmarks/results/bench, nothing at all
    runs = list((cache / "bench").iterdir())
    assert len(runs) == 1
    out = runs[0]
    assert re.fullmatch(r"\d{8}-\d{6}", out.name)
    assert str(out) in result.output.splitlines()  # where the results went, on its own line
    assert (out / "report.md").is_file()
    assert (out / "results.json").is_file()
    report = (out / "report.md").read_text()
    assert f"--out {out}" in report  # the Command: line reproduces the run
    second = _run_small(
        tmp_path, "--no-peers", "--no-memory", env={"TOOLSEARCH_CACHE_DIR": str(cache)}
    )
    assert second.exit_code == 0, second.output
    assert len(list((cache / "bench").iterdir())) == 2  # never overwrites an earlier run


def test_bench_report_command_names_the_options_given_and_the_out_folder(tmp_path):
    out = tmp_path / "out"
    result = _run_small(tmp_path, "--no-peers", "--no-memory", "--out", str(out))
    assert result.exit_code == 0, result.output
    command = json.loads((out / "results.json").read_text())["command"]
    catalog, queries = tmp_path / "mine.jsonl", tmp_path / "requests.jsonl"
    assert command == (
        f"toolsearch bench --index bm25 --no-peers --runs 2 --no-memory --catalog {catalog} "
        f"--queries {queries} --out {out}"
    )
    assert f"Command: `{command}`" in (out / "report.md").read_text()


def test_bench_table_fits_80_columns_and_has_a_legend(tmp_path):
    result = _run_small(tmp_path, "--no-memory", "--out", str(tmp_path / "out"))  # with peers
    assert result.exit_code == 0, result.output
    assert "peer: reference regex" in result.output
    stdout = result.stdout
    table = stdout[stdout.index("mine (30 tools, 2 tasks)") : stdout.index("wrote ")]
    assert max(len(line) for line in table.splitlines()) <= 80
    assert "full loop" in table
    for word in ("tokens:", "saved:", "success:", "R@5:", "p50:", "MB:"):
        assert word in table  # the legend under the table


@pytest.mark.parametrize("args", [[], ["bench"]])
def test_help_is_not_cut_at_80_columns(args):
    result = _invoke([*args, "--help"])
    assert result.exit_code == 0
    assert "…" not in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80


def test_phase_progress_lines_and_times():
    import io

    from rich.console import Console

    from toolsearch_bench.progress import PhaseProgress, format_seconds

    stream = io.StringIO()
    with PhaseProgress(Console(file=stream, width=80)) as progress:
        progress.phase("acme", "full loop (3 tasks)", 3)
        for _ in range(3):
            progress.advance()
        progress.phase("acme", "memory: bm25", None)
        progress.finish("acme")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3
    assert re.fullmatch(r"\[bench\] acme: full loop \(3 tasks\) \.\.\. done in 0\.\d s", lines[0])
    assert lines[2].startswith("[bench] acme: done in ")
    assert format_seconds(12.34) == "12.3 s"
    assert format_seconds(192) == "3 min 12 s"
    assert format_seconds(3720) == "1 h 02 min"


def test_bench_table_folds_a_long_index_name_instead_of_cutting_it(monkeypatch):
    import io

    from rich.console import Console

    from toolsearch_bench.cli_support import print_table as _print_table
    from toolsearch_bench.runner import BenchRecord

    common = {
        "dataset": "acme",
        "peer": False,
        "tasks": 421,
        "tools": 158,
        "provider": "openai",
        "tokenizer": "o200k_base",
        "prompt_tokens_median": 1.0,
        "prompt_tokens_p90": 1.0,
        "definition_share": 50.0,
        "searches_per_task": 1.0,
        "iterations_per_task": 2.0,
    }
    records = [
        BenchRecord(
            mode="full",
            index="-",
            prompt_tokens_mean=238_820.0,
            savings_pct=None,
            success_rate=100.0,
            **common,
        ),
        BenchRecord(
            mode="search",
            index="hybrid:minilm-tuned-openapi-only",
            prompt_tokens_mean=9_978.0,
            savings_pct=95.8,
            success_rate=27.7,
            recall_at_5=44.2,
            p50_us=11_568.0,
            peak_rss_mb=1_004.1,
            **common,
        ),
    ]
    stream = io.StringIO()
    _print_table(Console(file=stream, width=80), records)
    text = stream.getvalue()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "hybrid:minilm-tun" in text  # folded where the figures leave no room, never cut
    assert "openapi-only" in text
    assert "1,004" in text


def test_bench_a_dataset_that_is_not_installed_is_a_short_error(tmp_path, monkeypatch):
    from toolsearch_bench import loaders
    from toolsearch_bench.loaders import DatasetUnavailableError

    def missing():
        raise DatasetUnavailableError("BFCL", "bfcl-eval", "pip install --no-deps bfcl-eval")

    monkeypatch.setitem(loaders.DATASETS, "bfcl", missing)
    result = _invoke(["bench", "-d", "bfcl", "--no-peers", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert " ".join(lines[1:]) == (  # the error, wrapped to 80 columns
        "error: the BFCL loader needs the package 'bfcl-eval', which is not installed; "
        "install it with: pip install --no-deps bfcl-eval"
    )
    assert re.fullmatch(r"\[bench\] bfcl: loading \.\.\. stopped after 0\.\d s", lines[0])


def test_bench_runs_without_the_disk_embedding_cache_and_restores_the_setting(
    tmp_path, monkeypatch
):
    """Build times are cold (no disk embedding cache) during the command, unless the user
    named one; a caller running it in-process gets its own setting back."""
    from toolsearch import cli
    from toolsearch_bench import runner

    seen = []

    def spy(*args, **kwargs):
        seen.append(os.environ.get("TOOLSEARCH_EMBEDDING_CACHE"))
        return []

    monkeypatch.setattr(runner, "run_dataset", spy)
    arguments = ["bench", "--index", "bm25", "--no-peers", "--out", str(tmp_path / "out")]
    monkeypatch.delenv("TOOLSEARCH_EMBEDDING_CACHE", raising=False)
    typer_testing.CliRunner().invoke(cli._app(), arguments)
    assert "TOOLSEARCH_EMBEDDING_CACHE" not in os.environ
    monkeypatch.setenv("TOOLSEARCH_EMBEDDING_CACHE", str(tmp_path / "mine"))
    typer_testing.CliRunner().invoke(cli._app(), arguments)
    assert seen == ["off", str(tmp_path / "mine")]
    assert os.environ["TOOLSEARCH_EMBEDDING_CACHE"] == str(tmp_path / "mine")
