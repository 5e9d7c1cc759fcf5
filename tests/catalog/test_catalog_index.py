"""Catalog indexes: build, load, the documented errors, incremental rebuilds, interrupted
builds, catalog-backed sessions and the tool-search advisor over a loaded catalog.

Everything uses the deterministic ``HashingEmbedder`` and small catalogs, so it is fast and
needs no model.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tantivy", reason="catalog indexes need toolsearch[bm25] (tantivy)")
pytest.importorskip("faiss", reason="catalog indexes need toolsearch[vector] (faiss-cpu)")

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolDefinition,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.catalog.index import CatalogIndex
from toolsearch.catalog.manifest import read_manifest
from toolsearch.errors import (
    CatalogSourceError,
    IndexCorruptedError,
    IndexNotFoundError,
    ManifestMismatchError,
)
from toolsearch.indexes import (
    Bm25ToolIndex,
    HashingEmbedder,
    HybridToolIndex,
    VectorToolIndex,
)
from toolsearch.models import FunctionChatModel
from toolsearch.search import ToolIndex, ToolSearchRequest

# search mechanics on a few tools: the plain search loop (tests/conftest.py, cold_search)
pytestmark = pytest.mark.cold_search

ROOT = Path(__file__).resolve().parents[2]

SERVICES = {
    "weather": ["forecast", "alerts", "radar", "humidity", "wind", "station"],
    "calendar": ["event", "meeting", "reminder", "attendee", "slot", "agenda"],
    "email": ["message", "inbox", "draft", "signature", "attachment", "folder"],
    "github": ["issue", "pull_request", "repository", "branch", "release", "commit"],
    "billing": ["invoice", "payment", "refund", "subscription", "customer", "coupon"],
    "storage": ["bucket", "object", "upload", "download", "quota", "snapshot"],
}
VERBS = {
    "get": "Get",
    "list": "List every",
    "create": "Create a new",
    "delete": "Delete an existing",
}


def make_tools() -> list[ToolDefinition]:
    """144 realistic-looking tools (6 services x 6 objects x 4 verbs)."""
    tools = []
    for service, objects in SERVICES.items():
        for obj in objects:
            for verb, text in VERBS.items():
                words = obj.replace("_", " ")
                tools.append(
                    ToolDefinition(
                        name=f"{service}_{verb}_{obj}",
                        description=f"{text} {words} in the {service} service.",
                        input_schema={
                            "type": "object",
                            "properties": {
                                f"{obj}_id": {"type": "string", "description": f"The {words} id"},
                                "account": {"type": "string", "description": "Account name"},
                            },
                            "required": [f"{obj}_id"],
                        },
                        category=service,
                    )
                )
    return tools


TOOLS = make_tools()
QUERIES = [
    "weather forecast for tomorrow",
    "refund a payment",
    "delete a storage bucket",
    "create a meeting with attendees",
    "list pull requests",
    "email attachment",
    "github_get_issue",
    "GITHUB_GET_ISSUE",
    "something unrelated entirely",
    "id",
    "((((",
    "",
]


VIEWS = 3
"""Texts embedded per tool (``PreparedTool.embedding_views``)."""


class CountingEmbedder:
    """A ``HashingEmbedder`` that counts how many texts it embedded."""

    def __init__(self, dimension: int = 64) -> None:
        self._inner = HashingEmbedder(dimension)
        self.documents = 0

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed_documents(self, texts: Any) -> Any:
        self.documents += len(texts)
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        return self._inner.embed_query(text)


def hits(response: Any) -> list[tuple[str, float | None]]:
    return [(r.tool_name, r.relevance_score) for r in response.tool_references]


def build(tmp_path: Path, kind: str = "bm25", tools: list[ToolDefinition] | None = None, **kw):
    embedder = kw.pop("embedder", None)
    if kind != "bm25" and embedder is None:
        embedder = HashingEmbedder(64)
    return CatalogIndex.build(
        tools if tools is not None else TOOLS,
        out=tmp_path / f"idx-{kind}",
        kind=kind,
        embedder=embedder,
        **kw,
    )


# -- build, load, round trip -----------------------------------------------------------


@pytest.mark.parametrize("kind", ["bm25", "vector", "hybrid"])
def test_round_trip_build_load_search_is_identical(tmp_path, kind):
    built = build(tmp_path, kind)
    before = {q: hits(built.search_catalog(q, 7)) for q in QUERIES}
    loaded = CatalogIndex.load(built.path)
    after = {q: hits(loaded.search_catalog(q, 7)) for q in QUERIES}
    assert after == before
    assert loaded.manifest.tool_count == len(TOOLS)
    assert before["github_get_issue"][0][0] == "github_get_issue"  # exact name first
    assert before["GITHUB_GET_ISSUE"][0][0] == "github_get_issue"  # then case-insensitive
    assert before[""] == []
    if kind == "bm25":  # no terms, no keyword hits (a vector search ranks anything)
        assert before["(((("] == []
    assert loaded.tool("weather_get_forecast") == TOOLS[0]


def test_manifest_records_kind_embedder_counts_settings_checksums(tmp_path):
    index = build(tmp_path, "hybrid")
    manifest = read_manifest(index.path)
    assert manifest.kind == "hybrid"
    assert manifest.embedder == {"name": "hashing-64", "dimension": 64}
    assert manifest.counts["tools"] == len(TOOLS)
    assert manifest.counts["embedded"] == len(TOOLS)
    assert manifest.settings["vector"]["index"] == "flat"
    assert manifest.settings["bm25"]["k1"] == 1.2
    assert {"tools.sqlite", "embeddings.npy", "vectors.faiss", "fingerprints.npy"} <= set(
        manifest.files
    )
    assert all(len(entry.sha256) == 64 for entry in manifest.files.values())
    assert "--kind hybrid" in manifest.build_command
    # the fingerprints file lists every tool's fingerprint in catalog order
    import numpy as np

    stored = np.load(index.path / "fingerprints.npy")
    assert [bytes(d).hex() for d in stored] == [t.fingerprint for t in TOOLS]


def test_hnsw_above_the_threshold_and_still_finds_tools(tmp_path):
    from toolsearch.catalog.vector_artifact import VectorSettings

    index = build(tmp_path, "vector", vector=VectorSettings(hnsw_threshold=50))
    assert index.manifest.settings["vector"]["index"] == "hnsw"
    assert index.search_catalog("billing_get_refund", 3).tool_names[0] == "billing_get_refund"
    reloaded = CatalogIndex.load(index.path)
    assert hits(reloaded.search_catalog("refund payment", 5)) == hits(
        index.search_catalog("refund payment", 5)
    )


def test_bm25_catalog_scores_equal_the_session_index(tmp_path):
    """The artifact reproduces Bm25ToolIndex: same tools, same hits and scores."""
    index = build(tmp_path, "bm25")
    reference = Bm25ToolIndex()
    reference.index_tools("s", TOOLS)
    index.index_tools("subset", TOOLS[1:])  # a subset: the exact formula, exact scores
    subset_reference = Bm25ToolIndex()
    subset_reference.index_tools("s", TOOLS[1:])
    for query in QUERIES:
        expected = reference.search(ToolSearchRequest("s", query, 10))
        got = index.search_catalog(query, 10)  # precomputed impacts: float32 precision
        assert got.tool_names == expected.tool_names, query
        assert [s for _, s in hits(got)] == pytest.approx([s for _, s in hits(expected)])
        assert got.total_matches == expected.total_matches
        expected = subset_reference.search(ToolSearchRequest("s", query, 10))
        assert hits(index.search(ToolSearchRequest("subset", query, 10))) == hits(expected)


def test_min_score_cuts_like_the_session_index(tmp_path):
    from toolsearch.catalog.bm25_artifact import Bm25Settings

    index = build(tmp_path, "bm25", bm25=Bm25Settings(min_score=0.3))
    reference = Bm25ToolIndex(min_score=0.3)
    reference.index_tools("s", TOOLS)
    index.index_tools("s", TOOLS[::2])
    subset_reference = Bm25ToolIndex(min_score=0.3)
    subset_reference.index_tools("s", TOOLS[::2])
    for query in QUERIES:
        expected = reference.search(ToolSearchRequest("s", query, 3))
        got = index.search_catalog(query, 3)
        assert got.tool_names == expected.tool_names, query
        assert got.total_matches == expected.total_matches, query
        expected = subset_reference.search(ToolSearchRequest("s", query, 3))
        assert hits(index.search(ToolSearchRequest("s", query, 3))) == hits(expected), query


def test_duplicate_names_keep_the_first_definition(tmp_path):
    clash = ToolDefinition(name=TOOLS[0].name, description="another definition")
    index = build(tmp_path, "bm25", tools=[*TOOLS, clash])
    assert index.manifest.counts["tools"] == len(TOOLS)
    assert index.manifest.counts["duplicate_names"] == 1
    assert index.tool(TOOLS[0].name) == TOOLS[0]


def test_builds_from_a_jsonl_file_and_reports_bad_records(tmp_path):
    source = tmp_path / "catalog.jsonl"
    source.write_text(
        "\n".join(json.dumps(t.to_dict()) for t in TOOLS[:10]) + "\n", encoding="utf-8"
    )
    index = CatalogIndex.build([source], out=tmp_path / "from-file", kind="bm25")
    assert len(index) == 10
    assert index.manifest.sources == (str(source),)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"name": "ok"}\n{"description": "no name"}\n', encoding="utf-8")
    with pytest.raises(CatalogSourceError, match=r"broken\.jsonl"):
        CatalogIndex.build([broken], out=tmp_path / "broken-index", kind="bm25")
    assert not (tmp_path / "broken-index").exists()  # nothing half-built left behind
    assert not list(tmp_path.glob(".broken-index.*"))


def test_an_empty_catalog_is_an_error(tmp_path):
    with pytest.raises(CatalogSourceError, match="no tools"):
        CatalogIndex.build([], out=tmp_path / "empty", kind="bm25")


def test_refuses_to_replace_a_folder_that_is_not_an_index(tmp_path):
    target = tmp_path / "precious"
    target.mkdir()
    (target / "notes.txt").write_text("keep me", encoding="utf-8")
    from toolsearch.errors import CatalogIndexError

    with pytest.raises(CatalogIndexError, match="not a catalog index"):
        CatalogIndex.build(TOOLS, out=target, kind="bm25")
    assert (target / "notes.txt").read_text(encoding="utf-8") == "keep me"


# -- documented load errors ------------------------------------------------------------


def test_missing_index_says_how_to_build(tmp_path):
    with pytest.raises(IndexNotFoundError, match="toolsearch index build SOURCE"):
        CatalogIndex.load(tmp_path / "nothing-here")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IndexNotFoundError, match=r"no manifest\.json"):
        CatalogIndex.load(tmp_path / "empty")


def test_newer_format_is_a_mismatch_with_the_rebuild_command(tmp_path):
    index = build(tmp_path, "bm25")
    manifest_path = index.path / "manifest.json"
    data = json.loads(manifest_path.read_text(encoding="utf-8"))
    data["format_version"] += 1
    manifest_path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ManifestMismatchError) as caught:
        CatalogIndex.load(index.path)
    assert "upgrade toolsearch" in str(caught.value)
    assert "toolsearch index build" in str(caught.value)
    assert "--kind bm25" in str(caught.value)


def test_other_embedder_is_a_mismatch(tmp_path):
    index = build(tmp_path, "vector", embedder=HashingEmbedder(64))
    with pytest.raises(ManifestMismatchError, match="hashing-64") as caught:
        CatalogIndex.load(index.path, embedder=HashingEmbedder(32))
    assert "--embedder hashing-32" in str(caught.value)
    # the same embedder (or none: recreated from the manifest) loads
    assert len(CatalogIndex.load(index.path, embedder=HashingEmbedder(64))) == len(TOOLS)
    assert CatalogIndex.load(index.path).embedder.name == "hashing-64"


def test_an_embedder_without_a_known_name_says_how_to_load_or_rebuild(tmp_path):
    class MyEmbedder(CountingEmbedder):
        name = "my-company/embedder-v3"

    index = build(tmp_path, "vector", embedder=MyEmbedder())
    with pytest.raises(ManifestMismatchError) as caught:
        CatalogIndex.load(index.path)
    message = str(caught.value)
    assert "my-company/embedder-v3" in message
    assert "CatalogIndex.load(path, embedder=...)" in message
    assert f"toolsearch index build SOURCE... --kind vector --out {index.path}" in message
    assert len(CatalogIndex.load(index.path, embedder=MyEmbedder())) == len(TOOLS)


def test_a_manifest_never_picks_a_model_to_download(tmp_path, monkeypatch):
    """A hub name in a shared index's manifest fails at load, typed, before any network."""

    class HubNamed(CountingEmbedder):
        name = "sentence-transformers/some-org/some-model"

    index = build(tmp_path, "hybrid", embedder=HubNamed())

    def no_download(*_: Any, **__: Any) -> Any:
        raise AssertionError("a model was about to be loaded")

    monkeypatch.setattr(
        "toolsearch.indexes.embedders.specs.SentenceTransformerEmbedder", no_download
    )
    with pytest.raises(ManifestMismatchError, match="model hub") as caught:
        CatalogIndex.load(index.path)
    assert "CatalogIndex.load(path, embedder=...)" in str(caught.value)
    # the user may still pass the embedder explicitly
    assert len(CatalogIndex.load(index.path, embedder=HubNamed())) == len(TOOLS)


def test_corrupted_artifacts_are_reported(tmp_path):
    index = build(tmp_path, "hybrid")
    path = index.path
    index.close()
    docs = path / "bm25_docs.npy"
    original = docs.read_bytes()
    # same size, different bytes: sizes pass, the sha256 check (verify=True) does not
    flipped = bytearray(original)
    flipped[-1] ^= 0xFF
    docs.write_bytes(bytes(flipped))
    CatalogIndex.load(path, verify=False)  # sizes only: loads
    with pytest.raises(IndexCorruptedError, match=r"bm25_docs\.npy.*sha256") as caught:
        CatalogIndex.load(path, verify=True)
    with pytest.raises(IndexCorruptedError, match=r"bm25_docs\.npy.*sha256"):
        CatalogIndex.load(path)  # a small index is checksummed on every load
    assert "rebuild with: toolsearch index build" in str(caught.value)
    # truncated: caught on every load
    docs.write_bytes(original[:-8])
    with pytest.raises(IndexCorruptedError, match=r"bm25_docs\.npy has"):
        CatalogIndex.load(path)
    # missing file
    docs.unlink()
    with pytest.raises(IndexCorruptedError, match=r"bm25_docs\.npy is missing"):
        CatalogIndex.load(path)
    # unreadable manifest
    (path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(IndexCorruptedError, match=r"manifest\.json is unreadable"):
        CatalogIndex.load(path)


# -- incremental rebuilds --------------------------------------------------------------


def test_rebuild_reembeds_only_changed_tools(tmp_path):
    out = tmp_path / "incremental"
    first = CountingEmbedder()
    CatalogIndex.build(TOOLS, out=out, kind="hybrid", embedder=first)
    assert first.documents == len(TOOLS) * VIEWS  # every view of every tool

    changed = list(TOOLS)
    for i in (3, 40, 100):  # three descriptions change
        tool = changed[i]
        changed[i] = ToolDefinition(
            name=tool.name,
            description=tool.description + " Now with paging.",
            input_schema=tool.input_schema,
            category=tool.category,
        )
    del changed[7]  # one tool goes
    changed += [  # two are new
        ToolDefinition(name="maps_route", description="Plan a driving route between places"),
        ToolDefinition(name="maps_geocode", description="Turn an address into coordinates"),
    ]
    second = CountingEmbedder()
    rebuilt = CatalogIndex.build(changed, out=out, kind="hybrid", embedder=second)
    assert second.documents == 5 * VIEWS
    assert rebuilt.manifest.counts["embedded"] == 5
    assert rebuilt.manifest.counts["reused_embeddings"] == len(changed) - 5

    fresh = CatalogIndex.build(
        changed, out=tmp_path / "fresh", kind="hybrid", embedder=CountingEmbedder()
    )
    import numpy as np

    assert np.array_equal(
        np.load(out / "embeddings.npy"), np.load(tmp_path / "fresh" / "embeddings.npy")
    )
    for query in QUERIES:
        assert hits(rebuilt.search_catalog(query, 5)) == hits(fresh.search_catalog(query, 5))

    # another embedder: nothing is reused
    other = CountingEmbedder(32)
    CatalogIndex.build(changed, out=out, kind="vector", embedder=other)
    assert other.documents == len(changed) * VIEWS


def test_rebuild_reuses_rows_by_embedded_text(tmp_path, monkeypatch):
    """Rows are reused when the text they embed is unchanged, not merely the definition:
    a new text preparation re-embeds everything, a change outside the text nothing."""

    out = tmp_path / "by-text"
    CatalogIndex.build(TOOLS, out=out, kind="vector", embedder=CountingEmbedder())
    retyped = [  # the fingerprint changes, the embedded text does not
        ToolDefinition(t.name, t.description, {**t.input_schema, "additionalProperties": False},
                       t.category)
        for t in TOOLS
    ]  # fmt: skip
    same_text = CountingEmbedder()
    CatalogIndex.build(retyped, out=out, kind="vector", embedder=same_text)
    assert same_text.documents == 0

    from toolsearch.catalog import pipeline

    prepare = pipeline._prepare

    def new_preparation(tool):  # as if a later toolsearch prepared text differently
        prepared = prepare(tool)
        return type(prepared)(**{**_fields(prepared), "description": prepared.description + "!"})

    monkeypatch.setattr(pipeline, "_prepare", new_preparation)
    new_text = CountingEmbedder()
    CatalogIndex.build(retyped, out=out, kind="vector", embedder=new_text)
    assert new_text.documents == len(TOOLS) * VIEWS


def _fields(prepared: Any) -> dict[str, Any]:
    return {name: getattr(prepared, name) for name in prepared.__dataclass_fields__}


# -- interrupted builds ----------------------------------------------------------------

_SLOW_BUILD = textwrap.dedent(
    """
    import sys
    from toolsearch.catalog.index import CatalogIndex
    from toolsearch.tools.definition import ToolDefinition

    def tools():
        for i in range(10_000_000):
            yield ToolDefinition(name=f"generated_tool_{i}", description=f"Generated tool {i}")

    def progress(stage, done, total):
        print(stage, done, flush=True)

    CatalogIndex.build(tools(), out=sys.argv[1], kind="bm25", progress=progress)
    """
)


def test_a_killed_build_leaves_the_old_index_usable(tmp_path):
    index = build(tmp_path, "bm25")
    path = index.path
    expected = {q: hits(index.search_catalog(q, 5)) for q in QUERIES}
    index.close()
    script = tmp_path / "slow_build.py"
    script.write_text(_SLOW_BUILD, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, str(script), str(path)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:  # wait until the build is well under way
            if line.startswith("tools") and int(line.split()[1]) >= 2000:
                break
        assert list(tmp_path.glob(f".{path.name}.build-{process.pid}-*"))  # it was writing
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait(timeout=30)
    reloaded = CatalogIndex.load(path, verify=True)
    assert len(reloaded) == len(TOOLS)
    assert {q: hits(reloaded.search_catalog(q, 5)) for q in QUERIES} == expected
    reloaded.close()
    # the next build cleans up what the killed one left behind
    build(tmp_path, "bm25")
    assert not list(tmp_path.glob(f".{path.name}.build-*"))


_KILLED_SWAP = textwrap.dedent(
    """
    import os, shutil, signal, sys
    from toolsearch.catalog.index import CatalogIndex
    from toolsearch.tools.definition import ToolDefinition

    out, step = sys.argv[1], sys.argv[2]
    replace, rmtree = os.replace, shutil.rmtree

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def killing_replace(src, dst):
        if step == "before-any-rename":
            die()
        replace(src, dst)
        if step == "old-moved-aside" and ".old-" in str(dst):
            die()
        if step == "new-in-place" and ".build-" in str(src):
            die()

    def killing_rmtree(path, *args, **kwargs):
        if step == "while-removing-old" and ".old-" in str(path):
            os.remove(os.path.join(path, "manifest.json"))  # half removed
            die()
        return rmtree(path, *args, **kwargs)

    os.replace, shutil.rmtree = killing_replace, killing_rmtree
    tools = [ToolDefinition(f"new_tool_{i}", f"A new tool number {i}") for i in range(20)]
    CatalogIndex.build(tools, out=out, kind="bm25")
    """
)


@pytest.mark.parametrize(
    ("step", "survivor"),
    [
        ("before-any-rename", "old"),
        ("old-moved-aside", "old"),  # the index folder is missing until the next load
        ("new-in-place", "new"),
        ("while-removing-old", "new"),
    ],
)
def test_a_build_killed_at_each_step_of_the_swap_leaves_a_whole_index(tmp_path, step, survivor):
    index = build(tmp_path, "bm25")
    path = index.path
    expected = hits(index.search_catalog("weather forecast", 5))
    index.close()
    script = tmp_path / "killed_swap.py"
    script.write_text(_KILLED_SWAP, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script), str(path), step], env=env, timeout=120)
    assert done.returncode == -signal.SIGKILL
    if step == "old-moved-aside":
        assert not path.exists()
    reloaded = CatalogIndex.load(path, verify=True)
    if survivor == "old":
        assert len(reloaded) == len(TOOLS)
        assert hits(reloaded.search_catalog("weather forecast", 5)) == expected
    else:
        assert len(reloaded) == 20
        assert reloaded.search_catalog("new tool", 1).tool_names == ["new_tool_0"]
    reloaded.close()
    build(tmp_path, "bm25")  # the next build removes what the killed one left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx-bm25", "killed_swap.py"]


def test_an_error_between_the_renames_puts_the_old_index_back(tmp_path, monkeypatch):
    index = build(tmp_path, "bm25")
    path = index.path
    index.close()
    replace = os.replace

    def failing_replace(src, dst):
        if ".build-" in str(src):
            raise OSError(28, "No space left on device")
        replace(src, dst)

    from toolsearch.catalog import swap

    monkeypatch.setattr(swap.os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space"):
        build(tmp_path, "bm25", tools=TOOLS[:10])
    monkeypatch.undo()
    assert len(CatalogIndex.load(path)) == len(TOOLS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx-bm25"]


# -- catalog-backed sessions -----------------------------------------------------------


@pytest.fixture(scope="module")
def hybrid_index(tmp_path_factory):
    return build(tmp_path_factory.mktemp("catalog"), "hybrid")


@pytest.fixture(scope="module")
def bm25_index(tmp_path_factory):
    return build(tmp_path_factory.mktemp("catalog"), "bm25")


def test_catalog_index_is_a_tool_index(bm25_index):
    assert isinstance(bm25_index, ToolIndex)


@pytest.mark.parametrize(
    ("kind", "reference"),
    [
        ("bm25", lambda: Bm25ToolIndex()),
        ("vector", lambda: VectorToolIndex(embedder=HashingEmbedder(64))),
        ("hybrid", lambda: HybridToolIndex(embedder=HashingEmbedder(64))),
    ],
)
def test_a_session_over_a_subset_searches_like_a_session_index(tmp_path, kind, reference):
    """Filtering happens inside the search: a subset of the catalog ranks exactly like a
    per-session index over the same tools (same statistics, same order)."""
    index = build(tmp_path, kind)
    subset = TOOLS[5::3]
    index.index_tools("s", subset)
    expected_index = reference()
    expected_index.index_tools("s", subset)
    allowed = {t.name for t in subset}
    for query in QUERIES:
        got = index.search(ToolSearchRequest("s", query, 6))
        expected = expected_index.search(ToolSearchRequest("s", query, 6))
        assert set(got.tool_names) <= allowed
        if kind == "bm25":  # the same formula on the same numbers: identical
            assert hits(got) == hits(expected), query
            assert got.total_matches == expected.total_matches
        elif kind == "vector":  # numpy vs FAISS float rounding: same scores, near-ties may swap
            assert [s for _, s in hits(got)] == pytest.approx([s for _, s in hits(expected)])
        elif query not in ("((((", "id"):  # fused ranks, away from ties
            assert got.tool_names[:3] == expected.tool_names[:3], query


def test_sessions_are_isolated_and_clearable(hybrid_index):
    weather = [t for t in TOOLS if t.category == "weather"]
    billing = [t for t in TOOLS if t.category == "billing"]
    hybrid_index.index_tools("a", weather)
    hybrid_index.index_tools("b", billing)
    for query in ("refund payment", "weather forecast", "billing_get_invoice"):
        assert {n.split("_")[0] for n in hybrid_index.search(ToolSearchRequest("a", query)).
                tool_names} <= {"weather"}  # fmt: skip
        assert {n.split("_")[0] for n in hybrid_index.search(ToolSearchRequest("b", query)).
                tool_names} <= {"billing"}  # fmt: skip
    # an exact name outside the session is not found
    assert (
        "billing_get_invoice"
        not in hybrid_index.search(ToolSearchRequest("a", "billing_get_invoice")).tool_names
    )
    hybrid_index.clear_index("a")
    assert hybrid_index.search(ToolSearchRequest("a", "weather forecast")).tool_names == []
    assert hybrid_index.search(ToolSearchRequest("b", "refund")).tool_names
    assert hybrid_index.search(ToolSearchRequest("never", "refund")).tool_names == []
    hybrid_index.clear_index("b")
    hybrid_index.clear_index("never")  # clearing an unknown session is fine


def test_tools_outside_the_catalog_fall_back_and_merge(bm25_index):
    extra = ToolDefinition(
        name="translate_text",
        description="Translate text between languages",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    )
    changed = ToolDefinition(  # same name as a catalog tool, other description: not in it
        name="weather_get_forecast", description="Forecast the weather, with translated text"
    )
    subset = [changed, *TOOLS[1:30], extra]
    bm25_index.index_tools("mixed", subset)
    found = bm25_index.search(ToolSearchRequest("mixed", "translate text", 5))
    assert found.tool_names[0] == "translate_text"
    assert "weather_get_forecast" in found.tool_names  # the session's definition matched
    assert bm25_index.search(ToolSearchRequest("mixed", "translate_text")).tool_names[0] == (
        "translate_text"
    )
    # merged: catalog and fallback hits in one ranking, scores descending
    both = bm25_index.search(ToolSearchRequest("mixed", "weather text alerts", 10))
    assert {"translate_text", "weather_get_alerts"} <= set(both.tool_names)
    scores = [r.relevance_score for r in both.tool_references]
    assert scores == sorted(scores, reverse=True)
    # another session does not see the fallback tool
    bm25_index.index_tools("plain", TOOLS[:30])
    assert (
        "translate_text"
        not in bm25_index.search(ToolSearchRequest("plain", "translate text")).tool_names
    )
    bm25_index.clear_index("mixed")
    assert bm25_index.search(ToolSearchRequest("mixed", "translate text")).tool_names == []
    bm25_index.clear_index("plain")


@pytest.mark.parametrize(
    ("kind", "reference"),
    [
        ("bm25", lambda: Bm25ToolIndex()),
        ("vector", lambda: VectorToolIndex(embedder=HashingEmbedder(64))),
        ("hybrid", lambda: HybridToolIndex(embedder=HashingEmbedder(64))),
    ],
)
def test_a_mixed_session_fuses_catalog_and_fallback_tools_as_one_list(tmp_path, kind, reference):
    """A session of catalog tools and tools the catalog does not hold ranks like a session
    index over all of them: BM25 scores the fallback tools with the session's statistics,
    cosines merge, and the hybrid fuses the merged lists (fusing two fused lists gave the
    fallback's best tool a top rank for any query)."""
    index = build(tmp_path, kind)
    extra = [
        ToolDefinition("translate_text", "Translate text between languages", category="text"),
        ToolDefinition("ocr_scan", "Read the text in a scanned image"),
        ToolDefinition(  # the catalog has this name with another definition
            "weather_get_forecast", "Forecast the weather, with translated text",
            category="weather",
        ),
    ]  # fmt: skip
    tools = [extra[2], *TOOLS[1::4], *extra[:2], *TOOLS[2::9]]
    index.index_tools("m", tools)
    expected_index = reference()
    expected_index.index_tools("m", tools)
    for query in [*QUERIES, "translate text", "scan an image"]:
        got = index.search(ToolSearchRequest("m", query, 6))
        expected = expected_index.search(ToolSearchRequest("m", query, 6))
        if kind == "bm25":  # one corpus, the same statistics: identical
            assert hits(got) == hits(expected), query
            assert got.total_matches == expected.total_matches, query
            for category in ("weather", "text", "billing"):
                request = ToolSearchRequest("m", query, 4, category=category)
                assert hits(index.search(request)) == hits(expected_index.search(request))
        elif kind == "vector":  # cosines merge exactly (float32 rounding apart)
            assert [s for _, s in hits(got)] == pytest.approx(
                [s for _, s in hits(expected)], abs=1e-6
            )
        elif query not in ("((((", "id"):  # fused ranks; equal cosines may swap below
            assert got.tool_names[:2] == expected.tool_names[:2], query
    index.clear_index("m")


def test_index_tool_adds_to_a_session_and_category_filters(bm25_index):
    bm25_index.index_tools("s", [t for t in TOOLS if t.category in ("email", "github")])
    bm25_index.index_tool("s", TOOLS[0])
    assert bm25_index.search(ToolSearchRequest("s", "weather forecast")).tool_names[0] == (
        TOOLS[0].name
    )
    only_github = bm25_index.search(ToolSearchRequest("s", "create", 10, category="github"))
    assert only_github.tool_names
    assert all(n.startswith("github_") for n in only_github.tool_names)
    assert bm25_index.search(ToolSearchRequest("s", "create", category="nothing")).tool_names == []
    bm25_index.clear_index("s")


def test_sessions_with_the_same_tools_share_one_view(bm25_index):
    subset = TOOLS[:40]
    bm25_index.index_tools("x", subset)
    bm25_index.index_tools("y", list(subset))
    assert bm25_index.session_ranker("x") is bm25_index.session_ranker("y")
    assert bm25_index.prepared_count() == 1
    bm25_index.clear_index("x")
    assert bm25_index.search(ToolSearchRequest("y", "weather")).tool_names
    bm25_index.clear_index("y")
    assert bm25_index.prepared_count() == 0


def test_a_session_over_the_whole_catalog_uses_the_catalog_structures(bm25_index):
    bm25_index.index_tools("all", TOOLS)
    whole = bm25_index.session_ranker("all")
    assert whole is bm25_index.ranker.whole()  # the catalog's own structures, no subset
    assert hits(bm25_index.search(ToolSearchRequest("all", "get refund", 5))) == hits(
        bm25_index.search_catalog("get refund", 5)
    )
    bm25_index.clear_index("all")


@pytest.mark.parametrize("kind", ["bm25", "hybrid"])
def test_sixteen_threads_search_while_another_session_reindexes(tmp_path, kind):
    """Searches from 16 threads (subset sessions with a fallback tool, whole-catalog searches
    with varying k over an HNSW index) return what they return single-threaded, while
    another thread keeps registering and clearing a session of its own."""
    import threading

    from toolsearch.catalog.vector_artifact import VectorSettings

    index = build(tmp_path, kind, vector=VectorSettings(hnsw_threshold=50))
    extra = ToolDefinition("translate_text", "Translate text between languages")
    queries = ["weather forecast", "refund a payment", "translate text", "github_get_issue"]
    sessions = {f"s{i}": [*TOOLS[i % 7 :: 2 + i % 3], extra] for i in range(16)}
    for session, tools in sessions.items():
        index.index_tools(session, tools)

    def answers(session: str) -> list[Any]:
        out = [hits(index.search(ToolSearchRequest(session, q, 5))) for q in queries]
        out += [hits(index.search_catalog(q, 3 + int(session[1:]) * 7)) for q in queries]
        return out

    expected = {session: answers(session) for session in sessions}
    stop = threading.Event()
    failures: list[BaseException] = []

    def reindex() -> None:
        turn = 0
        while not stop.is_set():
            turn += 1
            index.index_tools("busy", [*TOOLS[turn % 50 : turn % 50 + 40], extra])
            index.index_tool("busy", ToolDefinition(f"busy_{turn}", "Churn"))
            index.clear_index("busy")

    def search(session: str) -> None:
        try:
            for _ in range(5):
                assert answers(session) == expected[session]
        except BaseException as exc:  # reported below, with the session
            failures.append(exc)

    churn = threading.Thread(target=reindex)
    churn.start()
    threads = [threading.Thread(target=search, args=(s,)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    churn.join()
    assert not failures, failures[0]
    assert index.session_ids() == list(sessions)
    for session in sessions:
        index.clear_index(session)
    assert index.prepared_count() == 0


# -- the tool-search advisor over a loaded catalog -------------------------------------

SEARCH = "toolSearchTool"


def test_tool_search_advisor_runs_on_a_loaded_catalog(tmp_path):
    executed: list[str] = []

    def callback(tool: ToolDefinition) -> FunctionToolCallback:
        def run(arguments: dict[str, Any]) -> str:
            executed.append(tool.name)
            return f"{tool.name} ok"

        return FunctionToolCallback.from_schema(
            run, name=tool.name, description=tool.description, input_schema=tool.input_schema
        )

    callbacks = [callback(t) for t in TOOLS]
    definitions = [c.definition for c in callbacks]
    CatalogIndex.build(definitions, out=tmp_path / "served", kind="bm25")
    catalog = CatalogIndex.load(tmp_path / "served")
    seen: list[list[str]] = []

    def script(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        seen.append([t.name for t in tools])
        last = messages[-1]
        if isinstance(last, UserMessage):
            query = json.dumps({"query": last.content, "maxResults": 3})
            return AssistantMessage(tool_calls=[ToolCall(id="1", name=SEARCH, arguments=query)])
        assert isinstance(last, ToolResponseMessage)
        response = last.responses[0]
        if response.name == SEARCH:
            found = json.loads(response.response_data)
            first = found[0]["name"] if isinstance(found[0], dict) else found[0]
            schema = next(t.input_schema for t in tools if t.name == first)
            arguments = json.dumps({p: "x" for p in schema.get("required", [])})
            return AssistantMessage(tool_calls=[ToolCall(id="2", name=first, arguments=arguments)])
        return AssistantMessage(content=f"done: {response.response_data}")

    advisor = ToolSearchToolCallingAdvisor(tool_index=catalog, max_results=3)
    client = ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()
    subset = [c for c in callbacks if c.definition.name.startswith(("billing", "storage"))]
    text = (
        client.prompt("create a new coupon")
        .tools(subset)
        .advisors(lambda a: a.param(CONVERSATION_ID, "user-1"))
        .call()
        .content()
    )
    assert executed == ["billing_create_coupon"]
    assert text == "done: billing_create_coupon ok"
    assert seen[0] == [SEARCH]  # the first request carries only the search tool
    assert "billing_create_coupon" in seen[1]  # discovered tools are injected
    assert all(n == SEARCH or n.startswith(("billing", "storage")) for s in seen for n in s)


def test_session_setup_needs_no_reindexing(tmp_path, monkeypatch):
    """A session over catalog tools resolves fingerprints: nothing is analyzed or embedded."""
    import toolsearch.catalog.pipeline as module
    import toolsearch.catalog.ranker as ranker
    import toolsearch.indexes.lexical.analysis as analysis

    embedder = CountingEmbedder()
    index = build(tmp_path, "hybrid", embedder=embedder)
    embedder.documents = 0

    def fail(*_: Any) -> Any:
        raise AssertionError("a catalog session must not re-index tools")

    monkeypatch.setattr(ranker, "tool_terms", fail)
    monkeypatch.setattr(analysis, "_fields", fail)
    monkeypatch.setattr(module, "_prepare", fail)
    index.index_tools("fast", TOOLS[:100])
    assert index.search(ToolSearchRequest("fast", "weather radar")).tool_names
    assert embedder.documents == 0
    index.clear_index("fast")


def test_worker_processes_build_the_same_index(tmp_path, monkeypatch):
    """Parallel analysis (JSONL lines or tools sent to workers) changes nothing."""
    import toolsearch.catalog.pipeline as module

    source = tmp_path / "catalog.jsonl"
    source.write_text("\n".join(json.dumps(t.to_dict() | {"category": t.category})
                                for t in TOOLS) + "\n", encoding="utf-8")  # fmt: skip
    serial = CatalogIndex.build(TOOLS, out=tmp_path / "serial", kind="bm25", workers=1)
    monkeypatch.setattr(module, "PARALLEL_FROM", 32)
    monkeypatch.setattr(module, "BATCH", 16)
    from_file = CatalogIndex.build([source], out=tmp_path / "file", kind="bm25", workers=2)
    from_tools = CatalogIndex.build(TOOLS, out=tmp_path / "tools", kind="bm25", workers=2)
    for index in (from_file, from_tools):
        assert index.manifest.fingerprints_digest == serial.manifest.fingerprints_digest
        assert index.manifest.counts == serial.manifest.counts
        for query in QUERIES:
            assert hits(index.search_catalog(query, 5)) == hits(serial.search_catalog(query, 5))
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(['{"name": "fine"}'] * 40 + ["{oops"]) + "\n", encoding="utf-8")
    with pytest.raises(CatalogSourceError, match=r"broken\.jsonl:41"):
        CatalogIndex.build([broken], out=tmp_path / "broken", kind="bm25", workers=2)


def test_specs_and_dumps_are_read_in_a_process_beside_the_build(tmp_path, monkeypatch):
    """MCP dumps and OpenAPI specs are parsed by a reader process while the main process
    stores and the workers analyze: the same index as reading them in this process, and
    their errors arrive as the usual one-line CatalogSourceError."""
    import multiprocessing

    import toolsearch.catalog.pipeline as module

    fixtures = ROOT / "tests" / "fixtures" / "catalog"
    sources = [fixtures / "mcp", fixtures / "openapi"]
    here = CatalogIndex.build(sources, out=tmp_path / "here", workers=1)
    monkeypatch.setattr(module, "PARALLEL_FROM", 8)
    monkeypatch.setattr(module, "BATCH", 4)
    readers = []
    read_beside = module._read_beside

    def spy(*args):
        readers.append(args[0])
        return read_beside(*args)

    monkeypatch.setattr(module, "_read_beside", spy)
    beside = CatalogIndex.build(sources, out=tmp_path / "beside", workers=2)
    assert readers == [sources]
    assert beside.manifest.fingerprints_digest == here.manifest.fingerprints_digest
    assert beside.manifest.counts == here.manifest.counts
    for query in ("create an issue", "list pets", "send a message", "add inventory"):
        assert hits(beside.search_catalog(query, 5)) == hits(here.search_catalog(query, 5))
    with pytest.raises(CatalogSourceError, match=r"not_json\.json"):
        CatalogIndex.build(
            [fixtures / "mcp", fixtures / "malformed" / "not_json.json"],
            out=tmp_path / "broken",
            workers=2,
            source_kind="mcp",
        )
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("toolsearch")]
    assert not (tmp_path / "broken").exists()


def test_build_progress_reports_files_then_tools(tmp_path):
    fixtures = ROOT / "tests" / "fixtures" / "catalog"
    seen: list[tuple[str, int, int | None]] = []
    index = CatalogIndex.build(
        [fixtures / "mcp", fixtures / "openapi" / "petstore.json"],
        out=tmp_path / "idx",
        progress=lambda stage, done, total: seen.append((stage, done, total)),
    )
    files = len([*(fixtures / "mcp").glob("*.json")]) + 1
    stages = [stage for stage, _, _ in seen]
    assert stages.index("scan") < stages.index("read") < stages.index("tools")
    assert ("scan", files, files) in seen
    assert ("read", files, files) in seen
    assert seen[-1] == ("tools", len(index), len(index))


def test_catalog_settings_are_the_session_indexes_parameter_objects():
    """One parameter object per method: a catalog build and a session index share it, so
    their defaults cannot drift apart."""
    from toolsearch.catalog import Bm25Settings, HybridSettings, VectorSettings
    from toolsearch.indexes import (
        Bm25Params,
        Bm25ToolIndex,
        FusionParams,
        HybridToolIndex,
        VectorParams,
        VectorToolIndex,
    )
    from toolsearch.indexes.embedders import HashingEmbedder

    assert (Bm25Settings, HybridSettings, VectorSettings) == (
        Bm25Params,
        FusionParams,
        VectorParams,
    )
    assert Bm25ToolIndex().params == Bm25Params()
    vector = VectorToolIndex(embedder=HashingEmbedder())
    assert vector.params == VectorParams()
    assert HybridToolIndex(vector=vector).params == FusionParams()


def test_previous_rows_are_found_by_digests_that_end_in_nul_bytes() -> None:
    """numpy's ``S32`` strips trailing NULs, so about one digest in 256 came back short and
    its tool was re-embedded on every rebuild."""
    import numpy as np

    from toolsearch.catalog.vector_artifact import PreviousEmbeddings

    ending_in_nul = b"\x07" * 31 + b"\x00"
    other = b"\x01" * 32
    keys = np.array([ending_in_nul, other], dtype="S32")
    rows = np.eye(2, dtype=np.float32)
    previous = PreviousEmbeddings(keys, rows)
    assert previous.row(ending_in_nul) is not None
    assert previous.row(ending_in_nul).tolist() == [1.0, 0.0]
    assert previous.row(other).tolist() == [0.0, 1.0]
