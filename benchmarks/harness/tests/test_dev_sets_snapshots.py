"""Development sets: kinds, reading snapshots through git, and a missing snapshot."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import dev_catalogs, dev_sets  # noqa: E402

NEW_SETS = [
    "toolalpaca",
    "api-bank",
    "gorilla-hf",
    "gorilla-tf",
    "gorilla-torch",
    "restbench-tmdb",
    "restbench-spotify",
    "seal-tools",
]


def test_every_set_has_a_kind():
    assert (*dev_sets.ORIGINAL_SETS, *NEW_SETS) == dev_sets.SET_NAMES
    assert set(dev_sets.KINDS) == set(dev_sets.SET_NAMES)
    allowed = {
        "rest-api",
        "ml-hub",
        "assistant-api",
        "synthetic-api",
        "multi-tool",
        "function-library",
    }
    for name in dev_sets.SET_NAMES:
        assert set(dev_sets.kinds_of(name)) <= allowed
        assert dev_sets.kind_of(name) == dev_sets.kinds_of(name)[0]
    assert dev_sets.kind_of("gorilla-tf") == "ml-hub"
    assert dev_sets.kind_of("restbench-tmdb") == "rest-api"
    assert dev_sets.kind_of("tau2") == "assistant-api"


def test_possible_held_out_sets_stay_out():
    for name in dev_sets.SET_NAMES:
        assert not any(word in name.lower() for word in ("metatool", "toollens", "ultratool"))


def test_unknown_set_is_an_error():
    with pytest.raises(ValueError, match="unknown dev set"):
        dev_sets.dev_sets(["no-such-set"])


def test_missing_snapshots_are_left_out_with_one_line_each(tmp_path, capsys):
    assert dev_sets.dev_sets(["toolalpaca", "seal-tools"], mirror=tmp_path) == []
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("toolalpaca left out: no snapshot of tangqiaoyu/ToolAlpaca")
    assert str(tmp_path) in lines[0]
    assert lines[1].startswith("seal-tools left out: no snapshot of fairyshine/Seal-Tools")
    assert dev_sets.dev_sets_with_kinds(["api-bank"], mirror=tmp_path) == []


def test_mirror_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(dev_catalogs.MIRROR_ENV, str(tmp_path))
    with pytest.raises(dev_catalogs.SnapshotMissing, match=str(tmp_path)):
        dev_catalogs.LOADERS["gorilla-tf"]()


def _snapshot(root: Path, repo: str, files: dict[str, str]) -> Path:
    """A bare git directory at ``root/<owner>+<name>/repo`` with one commit of ``files``."""
    owner, name = repo.split("/")
    git_dir = root / f"{owner}+{name}" / "repo"
    work = root / "work"
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text, encoding="utf-8")
    git = ["git", f"--git-dir={git_dir}", f"--work-tree={work}", "-c", "user.name=t"]
    git += ["-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fixture"], check=True)
    shutil.rmtree(work)
    return git_dir


def _seal_files() -> dict[str, str]:
    tool = {
        "api_name": "getWeather",
        "api_description": "Weather of a city",
        "field": "Weather",
        "parameters": {"city": {"type": "str", "description": "The city"}},
        "required": ["city"],
    }
    query = {
        "id": "dev-easy-0",
        "query": "Is it raining in Bergen?",
        "calling": [{"api": "getWeather"}],
    }
    return {
        "Seal-Tools_Dataset/tool.jsonl": json.dumps(tool) + "\n",
        "Seal-Tools_Dataset/dev.jsonl": json.dumps(query) + "\n",
    }


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_reads_through_git_at_head_when_the_recorded_commit_is_absent(tmp_path, capsys):
    _snapshot(tmp_path, "fairyshine/Seal-Tools", _seal_files())
    sets = dev_sets.dev_sets_with_kinds(["seal-tools"], mirror=tmp_path)
    assert [(s.name, s.kind) for s in sets] == [("seal-tools", "synthetic-api")]
    _, _, catalog, queries = sets[0]
    assert catalog.names == {"getWeather"}
    assert [q.gold for q in queries] == [("getWeather",)]
    err = capsys.readouterr().err
    assert "recorded commit ce753ecd60ed is not in" in err
    assert "reading HEAD" in err
    # the 3-tuple form callers unpack
    assert [n for n, _, _ in dev_sets.dev_sets(["seal-tools"], mirror=tmp_path)] == ["seal-tools"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_file_missing_from_the_snapshot_leaves_the_set_out(tmp_path, capsys):
    files = _seal_files()
    del files["Seal-Tools_Dataset/dev.jsonl"]
    _snapshot(tmp_path, "fairyshine/Seal-Tools", files)
    assert dev_sets.dev_sets(["seal-tools"], mirror=tmp_path) == []
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("seal-tools")]
    assert len(lines) == 1
    assert "left out: git show" in lines[0]


def test_counts_and_the_table_by_kind():
    from toolsearch.tools.definition import ToolDefinition
    from toolsearch_bench.data import Catalog, Query, QuerySet

    catalog = Catalog("c", (ToolDefinition("a"), ToolDefinition("b")))
    queries = QuerySet("q", (Query("1", "x", ("a",)), Query("2", "y", ("a", "b", "a"))))
    sets = [
        dev_sets.KindedDevSet("gorilla-hf", "ml-hub", catalog, queries),
        dev_sets.KindedDevSet("gorilla-tf", "ml-hub", catalog, queries),
        dev_sets.KindedDevSet("tau2", "assistant-api", catalog, queries),
    ]
    rows = dev_sets.counts(sets)
    assert rows[0] == {
        "set": "gorilla-hf",
        "kind": "ml-hub",
        "kinds": ["ml-hub"],
        "tools": 2,
        "queries": 2,
        "multi_gold": 1,
    }
    table = {"bm25": {"gorilla-hf": 10.0, "gorilla-tf": 20.0, "tau2": 60.0}}
    text = dev_sets.baseline_markdown(table, sets)
    assert "| **macro ml-hub** (2 sets) | | 15.0 |" in text
    assert "| **macro over kinds** (2) | | 37.5 |" in text
    assert "| **macro over sets** (3) | | 30.0 |" in text
