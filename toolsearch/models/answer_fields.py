"""Typed reads of a provider's answer, for adapters whose SDK does not validate it.

The ``openai`` SDK builds its answer objects without validation (pydantic's
``construct``): a compatible server that answers HTTP 200 with ``"id": 5``, a string where
an object belongs, a list or ``null`` body, hands the adapter whatever it sent, and reading
it raised ``AttributeError``, ``TypeError`` or pydantic's ``ValidationError`` from deep in
the mapping (issue 47). :class:`AnswerFields` reads each field the adapter uses with its
expected type, and a field of another type raises :class:`~toolsearch.errors.ProviderError`
naming the field's path in the answer (``choices[0].message.tool_calls[1].id``), what it
expected and what came.

Missing (``null``) optional fields stay lenient, as before: compatible servers omit many.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolsearch.errors import ProviderError

__all__ = ["AnswerFields", "is_object", "malformed_answer"]


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, list | tuple):
        return "a list"
    return "an object"


def malformed_answer(provider: str, where: str, expected: str, value: Any) -> ProviderError:
    """The error for an answer field of the wrong type: names the field and both types."""
    return ProviderError(
        provider,
        f"malformed answer: {where} is {_kind_of(value)}, expected {expected}",
        status_code=200,
        retryable=False,
    )


def is_object(value: Any) -> bool:
    """Whether ``value`` is a JSON object as the SDK hands it: a mapping or a model."""
    if isinstance(value, Mapping):
        return True
    if value is None or isinstance(value, str | bytes | int | float | list | tuple):
        return False
    return hasattr(value, "__dict__")


class AnswerFields:
    """Reads fields of one provider's answer objects with their expected JSON types."""

    def __init__(self, provider: str) -> None:
        self.provider = provider

    @staticmethod
    def path(where: str, name: str) -> str:
        """``where.name``, or ``name`` at the answer's top level (``where`` empty)."""
        return f"{where}.{name}" if where else name

    def error(self, where: str, expected: str, value: Any) -> ProviderError:
        return malformed_answer(self.provider, where, expected, value)

    @staticmethod
    def raw(obj: Any, name: str) -> Any:
        """``obj``'s field ``name`` (a mapping key or an attribute), ``None`` when absent."""
        if isinstance(obj, Mapping):
            return obj.get(name)
        return getattr(obj, name, None)

    def root(self, answer: Any, what: str = "the answer body") -> Any:
        """The answer itself: must be a JSON object (not a list, string or null)."""
        if not is_object(answer):
            raise self.error(what, "a JSON object", answer)
        return answer

    def object(self, obj: Any, name: str, where: str) -> Any | None:
        """An optional object field (``None`` when absent or null)."""
        value = self.raw(obj, name)
        if value is None:
            return None
        if not is_object(value):
            raise self.error(self.path(where, name), "an object", value)
        return value

    def text(self, obj: Any, name: str, where: str) -> str | None:
        """An optional string field (``None`` when absent or null)."""
        value = self.raw(obj, name)
        if value is None or isinstance(value, str):
            return value
        raise self.error(self.path(where, name), "a string", value)

    def count(self, obj: Any, name: str, where: str) -> int:
        """An optional token count: a non-negative integer (``0`` when absent or null)."""
        value = self.raw(obj, name)
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.error(self.path(where, name), "a non-negative integer", value)
        return value

    def items(self, obj: Any, name: str, where: str) -> list[Any]:
        """An optional list field (``[]`` when absent or null)."""
        value = self.raw(obj, name)
        if value is None:
            return []
        if not isinstance(value, list | tuple):
            raise self.error(self.path(where, name), "a list", value)
        return list(value)

    def each_object(self, obj: Any, name: str, where: str) -> list[tuple[str, Any]]:
        """An optional list of objects, each with its path (``where.name[i]``)."""
        out = []
        for index, item in enumerate(self.items(obj, name, where)):
            path = f"{self.path(where, name)}[{index}]"
            if not is_object(item):
                raise self.error(path, "an object", item)
            out.append((path, item))
        return out

    def dump(self, obj: Any) -> dict[str, Any]:
        """``obj`` as a plain dict (a model's ``model_dump``, without pydantic's warnings
        about fields of unexpected types: the fields read were checked already)."""
        if isinstance(obj, Mapping):
            return {str(k): v for k, v in obj.items() if v is not None}
        dump = getattr(obj, "model_dump", None)
        if callable(dump):
            try:
                dumped = dump(exclude_none=True, warnings=False)
            except Exception:  # a hostile field the dump cannot render
                return {}
            return dumped if isinstance(dumped, dict) else {}
        return {}
