"""The reranking index and the cross-encoder reranker (over a small untrained model)."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import pytest

from toolsearch.indexes.ranker import Ranking
from toolsearch.indexes.rerank import FunctionReranker, RerankingToolIndex
from toolsearch.indexes.text import prepare_tool
from toolsearch.search.types import ToolSearchRequest
from toolsearch.testing import tool_definition
from toolsearch.tools.definition import ToolDefinition

tool = partial(tool_definition, schema={"type": "object"})


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


# -- the cross-encoder, over a tiny model saved untrained -------------------------------

API_TOOLS = [
    tool("users_list", "List the users of an account."),
    tool("users_delete", "Delete a user from an account."),
    tool("accounts_update", "Rename an account."),
    tool("mail_send", "Send an email message to a recipient."),
    tool("mail_list_unread", "List unread email messages in a folder."),
    tool("mail_archive", "Archive an email message."),
    tool("weather_forecast", "Get the weather forecast for a city."),
    tool("weather_now", "Get the current weather conditions in a city."),
]


def _save_tiny_cross_encoder(folder: Path, *, num_labels: int = 1) -> Path:
    """A one-layer BERT with a random head and a vocabulary of the test texts' words:
    what a cross-encoder folder holds, made offline in well under a second. Its scores
    mean nothing; they are fixed by the seed, which is all these tests need."""
    torch = pytest.importorskip("torch", reason="the cross-encoder needs toolsearch[vector]")
    transformers = pytest.importorskip("transformers", reason="needs toolsearch[vector]")
    texts = [prepare_tool(t).full_text for t in [*TOOLS, *API_TOOLS]]
    words = sorted({w for text in texts for w in re.findall(r"[a-z0-9]+", text.lower())})
    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(vocab))
    config = transformers.BertConfig(
        vocab_size=len(words) + 5,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=192,
        initializer_range=0.5,  # spread the random scores, so they rarely tie
        num_labels=num_labels,
    )
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def cross_encoder_folder(tmp_path_factory) -> Path:
    return _save_tiny_cross_encoder(tmp_path_factory.mktemp("ce") / "tiny-cross-encoder")


def test_a_cross_encoder_scores_each_pair_the_same_in_any_batch(cross_encoder_folder):
    from toolsearch.indexes import CrossEncoderReranker

    documents = [prepare_tool(t).full_text for t in API_TOOLS]
    one = CrossEncoderReranker(cross_encoder_folder, batch_size=1)
    many = CrossEncoderReranker(cross_encoder_folder, batch_size=5)
    scores = one.score("send an email message", documents)
    assert len(scores) == len(documents)
    assert all(isinstance(s, float) for s in scores)
    assert many.score("send an email message", documents) == pytest.approx(scores, abs=1e-5)
    assert len(set(scores)) > 1  # the pairs are read, not a constant
    assert one.score("send an email message", []) == []


def test_a_cross_encoder_reranks_a_real_index(cross_encoder_folder):
    pytest.importorskip("tantivy", reason="the first stage here is BM25 (toolsearch[bm25])")
    from toolsearch.indexes import Bm25ToolIndex, CrossEncoderReranker

    reranker = CrossEncoderReranker(cross_encoder_folder)
    index = RerankingToolIndex(
        reranker, first_stage=Bm25ToolIndex(), depth=len(API_TOOLS), first_stage_weight=0
    )
    index.index_tools("s", API_TOOLS)
    first_stage = Bm25ToolIndex()
    first_stage.index_tools("s", API_TOOLS)
    texts = {t.name: prepare_tool(t).full_text for t in API_TOOLS}
    for query in ("list unread email", "weather in a city", "rename an account"):
        hits = names(first_stage, query)
        scores = reranker.score(query, [texts[name] for name in hits])
        # the reranker alone orders the first stage's hits (ties keep the first-stage order)
        order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
        assert names(index, query) == [hits[i] for i in order]


def test_a_model_with_several_labels_is_not_a_reranker(tmp_path):
    from toolsearch.indexes import CrossEncoderReranker

    two = _save_tiny_cross_encoder(tmp_path / "two", num_labels=2)
    with pytest.raises(ValueError, match="2 output labels"):
        CrossEncoderReranker(two)


def test_the_docs_example_builds_a_reranking_index(cross_encoder_folder):
    pytest.importorskip("tantivy", reason="the example's first stage needs toolsearch[bm25]")
    pytest.importorskip("faiss", reason="the example's first stage needs toolsearch[vector]")
    docs = Path(__file__).resolve().parents[2] / "docs" / "finetune.md"
    blocks = re.findall(r"```python\n(.*?)```", docs.read_text(encoding="utf-8"), re.DOTALL)
    [block] = [b for b in blocks if "RerankingToolIndex" in b]
    namespace: dict[str, object] = {}
    code = block.replace('"path/to/cross-encoder"', repr(str(cross_encoder_folder)))
    exec(compile(code, str(docs), "exec"), namespace)
    index = namespace["index"]
    assert isinstance(index, RerankingToolIndex)
    index.index_tools("s", TOOLS)
    assert names(index, "tool_4", limit=1) == ["tool_4"]


def test_a_folder_loads_as_a_reranker(cross_encoder_folder):
    from toolsearch.indexes import CrossEncoderReranker, load_reranker

    reranker = load_reranker(str(cross_encoder_folder))
    assert isinstance(reranker, CrossEncoderReranker)
    assert reranker.name == "cross-encoder/tiny-cross-encoder"
