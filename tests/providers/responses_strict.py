"""A strict check of Responses API request bodies, against the ``openai`` SDK's own types.

:func:`problems` returns what OpenAI's API would answer with a 400, as far as the SDK's
request types (``ResponseCreateParams``, with every TypedDict closed to unknown keys) and
the API's documented rules say: unknown or missing fields, a wrong type, a function or tool
name outside ``^[a-zA-Z0-9_-]{1,64}$``, an output item (``function_call_output``,
``tool_search_output``) that answers no earlier call, a call left unanswered, and a client
``tool_search_call`` without a client ``tool_search`` tool. The strict endpoint of
``fakes.py`` answers a body with problems with a 400 instead of its fixture.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from typing import Any

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@functools.cache
def _adapters() -> tuple[Any, Any]:
    import openai.types.responses as responses
    import openai.types.shared_params as shared
    from pydantic import ConfigDict, TypeAdapter
    from typing_extensions import is_typeddict

    for package in (responses, shared):  # close every request TypedDict to unknown keys
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and is_typeddict(value)
                    and value.__module__ == module.__name__
                ):
                    value.__pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[attr-defined]
    from openai.types.responses.response_create_params import (
        ResponseCreateParamsNonStreaming,
        ResponseCreateParamsStreaming,
    )

    return TypeAdapter(ResponseCreateParamsNonStreaming), TypeAdapter(ResponseCreateParamsStreaming)


class _LazyError(Exception):
    def __init__(self, path: str, error: Any) -> None:
        first = error.errors()[0]
        where = ".".join([path, *map(str, first["loc"])]).strip(".")
        super().__init__(f"invalid request body at {where}: {first['msg']}")


def _drain(value: Any, path: str = "") -> Any:
    """Consume the lazy validators pydantic puts on ``Iterable`` fields (the tool lists)."""
    from pydantic import ValidationError

    if isinstance(value, dict):
        return {k: _drain(v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_drain(v, f"{path}.{i}") for i, v in enumerate(value)]
    if type(value).__name__ == "ValidatorIterator":
        try:
            return [_drain(v, f"{path}.{i}") for i, v in enumerate(value)]
        except ValidationError as error:
            raise _LazyError(path, error) from None
    return value


def problems(body: dict[str, Any]) -> list[str]:
    """What is wrong with a ``/responses`` request body (empty: nothing)."""
    from pydantic import ValidationError

    plain, streaming = _adapters()
    adapter = streaming if body.get("stream") else plain
    try:
        _drain(adapter.validate_python(body))
    except ValidationError as error:
        first = error.errors()[0]
        return [f"invalid request body at {'.'.join(map(str, first['loc']))}: {first['msg']}"]
    except _LazyError as error:
        return [str(error)]
    found: list[str] = []
    tools = body.get("tools") or []
    client_search = any(
        t.get("type") == "tool_search" and t.get("execution") == "client" for t in tools
    )
    for tool in tools:
        if tool.get("type") == "function" and not NAME.match(tool["name"]):
            found.append(f"invalid tool name {tool['name']!r}")
    calls: dict[str, str] = {}  # call_id -> kind, while unanswered
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        kind = item.get("type")
        if kind == "function_call":
            if not NAME.match(item["name"]):
                found.append(f"invalid function name {item['name']!r}")
            calls[item["call_id"]] = kind
        elif kind == "tool_search_call" and item.get("execution") == "client":
            if not client_search:
                found.append("a client tool_search_call without a client tool_search tool")
            calls[item.get("call_id") or ""] = kind
        elif kind == "function_call_output":
            if calls.pop(item["call_id"], None) != "function_call":
                found.append(f"no function call found for output {item['call_id']!r}")
        elif kind == "tool_search_output" and item.get("execution", "server") == "client":
            if calls.pop(item.get("call_id") or "", None) != "tool_search_call":
                found.append(f"no tool search call found for output {item.get('call_id')!r}")
            for tool in item.get("tools") or []:
                if tool.get("type") == "function" and not NAME.match(tool["name"]):
                    found.append(f"invalid tool name {tool['name']!r}")
    found += [f"no tool output found for call {call_id!r}" for call_id in calls]
    return found
