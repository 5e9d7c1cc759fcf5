"""Tool names as each provider accepts them, mapped reversibly for one request.

A tool keeps its own name everywhere in toolsearch (registries, indexes, search results,
``ToolCall.name``, MCP calls). Only on the wire does a provider see another name when its
own is not acceptable there (``files.read`` for OpenAI, ``météo`` anywhere, a name over the
length limit): the adapter builds a :class:`WireNames` for the request, sends every tool,
assistant tool call and tool result under its wire name, and turns the names in the
model's calls (whole or streamed) back into the tools' own names.

The rules (:data:`OPENAI_NAMES`, :data:`ANTHROPIC_NAMES`, :data:`GEMINI_NAMES`):

* OpenAI function names: ``^[a-zA-Z0-9_-]{1,64}$`` (the API reference and the SDK's
  ``FunctionDefinition.name``); compatible servers (Ollama, vLLM, llama.cpp) follow it.
* Anthropic tool names: ``^[a-zA-Z0-9_-]{1,64}$``. Anthropic's tool-definition guide
  gives 64 characters, its API reference 128; the stricter bound is used so a name is
  never refused.
* Gemini function names: letters, digits, ``_ . : -``, starting with a letter or ``_``;
  64 characters (the Gemini API reference and Vertex AI; the newest SDK docs say 128).

How a name is mapped, deterministically (the same tools and history give the same wire
names in every request, whatever their order):

1. A name the provider accepts is sent unchanged.
2. Any other name is rewritten: accents are dropped (``météo`` -> ``meteo``), each run of
   characters the provider refuses becomes ``_``, a name that must start with a letter
   gets a leading ``_``, nothing left gives ``tool_`` plus 8 hex digits of the sha256 of
   the tool's own name, and a name over the limit keeps its head and ends in that hash.
3. A rewritten name that another tool already uses (``files.read`` next to
   ``files_read``, or ``a.b`` next to ``a/b``) gets that 8-digit hash suffix too, so every
   wire name is unique within the request. Names the provider accepts as they are claim
   theirs first; rewritten ones are assigned in sorted order of their own names.

The request-body functions (``openai_request_body``...) build the mapping themselves, so
they stay pure and the benchmark counts the names that are actually sent.

A tool search's result names tools too (a JSON list of names, or of ``{"name", "summary"}``
objects): the adapters send it through :func:`wire_search_result`, so the model reads the
names it is offered the tools under. Its hits (``ToolResponse.search_hits``) join the
request's mapping, so each gets the same wire name as its tool.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    ToolResponse,
    ToolResponseMessage,
    ToolSearchHit,
)

__all__ = [
    "ANTHROPIC_NAMES",
    "GEMINI_NAMES",
    "OPENAI_NAMES",
    "NameRule",
    "WireNames",
    "mentioned_names",
    "request_names",
    "wire_result_text",
    "wire_search_result",
]

_HASH_LENGTH = 8


@dataclass(frozen=True)
class NameRule:
    """What one provider accepts as a tool name: characters, first character, length."""

    provider: str
    allowed: str
    """The characters allowed, as the inside of a regex character class."""
    max_length: int = 64
    first: str | None = None
    """The characters allowed first (a character class), when it is stricter."""

    def __post_init__(self) -> None:
        first = f"[{self.first}]" if self.first else f"[{self.allowed}]"
        rest = f"[{self.allowed}]{{0,{self.max_length - 1}}}"
        object.__setattr__(self, "_valid", re.compile(f"^{first}{rest}$"))
        object.__setattr__(self, "_invalid_run", re.compile(f"[^{self.allowed}]+"))
        object.__setattr__(self, "_first", re.compile(f"^[{self.first}]") if self.first else None)

    def accepts(self, name: str) -> bool:
        """Whether the provider takes ``name`` as it is."""
        return bool(self._valid.match(name))  # type: ignore[attr-defined]

    def rewrite(self, name: str, suffix: str = "") -> str:
        """``name`` brought into the provider's shape (rule 2 above), ``_<suffix>`` at its
        end when given; over-long names end in ``_`` plus a hash of ``name``."""
        text = unicodedata.normalize("NFKD", name)
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
        text = self._invalid_run.sub("_", text).strip("_")  # type: ignore[attr-defined]
        if not text:  # nothing the provider accepts: a hash keeps such names apart
            text, suffix = "tool", suffix or _short_hash(name)
        if not self._starts_well(text):
            text = "_" + text
        tail = f"_{suffix}" if suffix else ""
        if len(text) + len(tail) > self.max_length:
            tail = tail or "_" + _short_hash(name)
            text = text[: self.max_length - len(tail)].rstrip("_-.:")
            if not text or not self._starts_well(text):
                text = "t"
        return text + tail

    def _starts_well(self, text: str) -> bool:
        first = self._first  # type: ignore[attr-defined]
        return first is None or bool(first.match(text))


OPENAI_NAMES = NameRule("openai", "a-zA-Z0-9_-", 64)
ANTHROPIC_NAMES = NameRule("anthropic", "a-zA-Z0-9_-", 64)
GEMINI_NAMES = NameRule("gemini", "a-zA-Z0-9_.:-", 64, first="a-zA-Z_")


def _short_hash(text: str) -> str:
    # surrogatepass: a name with a lone surrogate (a hostile MCP server's) hashes too, and
    # differently from the same name with U+FFFD in its place
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LENGTH]


class WireNames:
    """One request's tool names: each tool's own name and the name sent on the wire.

    Built from every name the request mentions (its tools, then the calls and results in
    its history); :meth:`wire` and :meth:`real` translate both ways. A name the mapping
    never saw is translated on the fly by :meth:`wire` (and remembered), and :meth:`real`
    returns a wire name it does not know unchanged (a model calling a tool that does not
    exist is the loop's to answer).
    """

    def __init__(self, rule: NameRule, names: Iterable[str] = ()) -> None:
        self.rule = rule
        self._wire: dict[str, str] = {}
        self._real: dict[str, str] = {}
        self._add(names)

    def _add(self, names: Iterable[str]) -> None:
        fresh = [n for n in dict.fromkeys(names) if n not in self._wire]
        kept = [n for n in fresh if self.rule.accepts(n) and n not in self._real]
        for name in kept:
            self._claim(name, name)
        for name in sorted(n for n in fresh if n not in self._wire):
            candidate = self.rule.rewrite(name)
            if candidate in self._real:
                candidate = self.rule.rewrite(name, _short_hash(name))
            counter = 2
            base = candidate
            while candidate in self._real:  # a hash clash: never in practice
                candidate = self.rule.rewrite(base, str(counter))
                counter += 1
            self._claim(name, candidate)

    def _claim(self, name: str, wire: str) -> None:
        self._wire[name] = wire
        self._real[wire] = name

    @property
    def renamed(self) -> dict[str, str]:
        """``{own name: wire name}`` of the names that are sent under another name."""
        return {name: wire for name, wire in self._wire.items() if name != wire}

    def wire(self, name: str) -> str:
        """The name ``name`` is sent under."""
        if name not in self._wire:
            self._add([name])
        return self._wire[name]

    def real(self, wire: str) -> str:
        """The tool's own name for a name the model sent (unknown names unchanged)."""
        return self._real.get(wire, wire)

    def __repr__(self) -> str:
        return f"WireNames({self.rule.provider}, renamed={self.renamed!r})"


def request_names(
    rule: NameRule, tool_names: Iterable[str], messages: Sequence[Message] = ()
) -> WireNames:
    """The :class:`WireNames` of a request: its tools' names, then every tool name its
    history mentions (calls, results and the tools a search found), so a call to a tool no
    longer offered keeps a valid, stable wire name too."""
    return WireNames(rule, mentioned_names(tool_names, messages))


def mentioned_names(tool_names: Iterable[str], messages: Sequence[Message] = ()) -> list[str]:
    """Every tool name a request mentions, in :func:`request_names`' order."""
    names = list(tool_names)
    for message in messages:
        if isinstance(message, AssistantMessage):
            names.extend(call.name for call in message.tool_calls if call.name)
        elif isinstance(message, ToolResponseMessage):
            for response in message.responses:
                if response.name:
                    names.append(response.name)
                names.extend(hit.name for hit in response.search_hits or () if hit.name)
    return names


def wire_search_result(text: str, hits: Iterable[ToolSearchHit] | None, names: WireNames) -> str:
    """A tool search's result text (``ToolResponse.response_data``) with the names of its
    ``hits`` as ``names`` sends them, for the model to read the names it can call.

    The text is a JSON list of tool names, or of objects whose ``"name"`` is one: each such
    name that a hit has (a tool's own name) becomes its wire name. Any other text (an error
    object, text that is not JSON, a name no hit has, such as one already on the wire) is
    left as it is, and a result with nothing to rename is returned unchanged, byte for
    byte (a cached prompt prefix stays valid). A rewritten result is JSON as
    ``json.dumps(..., ensure_ascii=False)`` writes it, as the search tool does.
    """
    renamed = {hit.name: names.wire(hit.name) for hit in hits or ()}
    renamed = {own: wire for own, wire in renamed.items() if own != wire}
    if not renamed:
        return text
    try:
        shown = json.loads(text)
    except ValueError:
        return text
    if not isinstance(shown, list):
        return text
    changed = False
    rewritten: list[object] = []
    for item in shown:
        name = item.get("name") if isinstance(item, dict) else item
        if isinstance(name, str) and name in renamed:
            wire = renamed[name]
            item, changed = ({**item, "name": wire} if isinstance(item, dict) else wire), True
        rewritten.append(item)
    return json.dumps(rewritten, ensure_ascii=False) if changed else text


def wire_result_text(response: ToolResponse, names: WireNames | None) -> str:
    """The text a tool result is sent with: a search's result (``search_hits`` set) through
    :func:`wire_search_result`, any other result (or any without ``names``) as it is."""
    if names is None or response.search_hits is None:
        return response.response_data
    return wire_search_result(response.response_data, response.search_hits, names)
