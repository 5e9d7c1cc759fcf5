"""Reading OpenAPI documents: JSON (orjson when installed) or YAML, and what identifies one
(spec version, title, API name). One document at a time; see :mod:`toolsearch.catalog.openapi`
for turning its operations into tools."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolsearch.errors import CatalogSourceError, MissingExtraError

__all__ = ["api_title", "info_of", "load_document", "plain", "spec_version"]


def load_document(path: Path) -> Any:
    """A JSON or YAML file parsed to plain Python data (YAML dates stay strings)."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogSourceError(source, f"cannot read the file ({exc})") from exc
    if path.suffix.lower() in (".yaml", ".yml"):
        return _load_yaml(text, source)
    fast = _fast_json()
    if fast is not None:
        try:
            return fast.loads(text)
        except ValueError:
            pass  # NaN, huge integers...: let the standard parser accept or explain
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogSourceError(
            source, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    except RecursionError as exc:
        raise CatalogSourceError(source, "JSON nested too deeply") from exc


@functools.cache
def _fast_json() -> Any:
    """orjson when it happens to be installed (faster on big specs); never required."""
    try:
        import orjson
    except ImportError:
        return None
    return orjson


def plain(value: Any) -> Any:
    """A copy of JSON data (dicts and lists copied, scalars shared): deepcopy's result,
    several times faster."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _load_yaml(text: str, source: str) -> Any:
    loader = _yaml_loader()
    import yaml

    try:
        data = yaml.load(text, Loader=loader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise CatalogSourceError(source, f"not valid YAML ({exc})") from exc
    except RecursionError:
        raise CatalogSourceError(source, "YAML nested too deeply") from None
    return _string_keys(data, source, len(text))


_YAML_LOADER: Any = None


def _yaml_loader() -> Any:
    """A safe YAML loader that keeps timestamps as strings (JSON has no date type)."""
    global _YAML_LOADER
    if _YAML_LOADER is None:
        try:
            import yaml
        except ImportError as exc:
            raise MissingExtraError("reading YAML OpenAPI specs", "catalog", "pyyaml") from exc
        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class _Loader(base):  # type: ignore[misc,valid-type]
            pass

        _Loader.yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for first, resolvers in base.yaml_implicit_resolvers.items()
        }
        _YAML_LOADER = _Loader
    return _YAML_LOADER


MIN_YAML_VALUES = 2_000_000
"""Values a YAML document may expand to: this many, or one per character of its text if that
is more. Without aliases a document holds far fewer values than characters; aliases make it
a graph, and turning it into plain data copies every alias: nine nested aliases of nine
("billion laughs") expand a few hundred bytes into 10^9 values."""


def _string_keys(data: Any, source: str = "<yaml>", size: int = 0) -> Any:
    """Plain data with string keys (YAML allows ``200:`` and ``yes:``; JSON Schema and JSON
    do not), copied within a budget of ``max(MIN_YAML_VALUES, size)`` values and the
    parser's depth."""
    limit = max(MIN_YAML_VALUES, size)
    budget = [limit]

    def copy(value: Any) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise CatalogSourceError(
                source,
                f"the YAML expands to more than {limit:,} values (aliases of aliases?); "
                "refusing to load it",
            )
        if isinstance(value, dict):
            return {str(k): copy(v) for k, v in value.items()}
        if isinstance(value, list):
            return [copy(v) for v in value]
        return value

    try:
        return copy(data)
    except RecursionError:
        raise CatalogSourceError(source, "YAML nested too deeply") from None


def spec_version(document: Any, source: str) -> int:
    """2 for Swagger 2.0, 3 for OpenAPI 3.x; otherwise a :class:`CatalogSourceError`."""
    if not isinstance(document, Mapping):
        raise CatalogSourceError(source, "an OpenAPI document must be a JSON/YAML object")
    openapi = document.get("openapi")
    if openapi is not None and str(openapi).startswith("3."):  # YAML may read 3.0 as a float
        version = 3
    elif str(document.get("swagger", "")).startswith("2"):
        version = 2
    else:
        found = openapi if openapi is not None else document.get("swagger")
        raise CatalogSourceError(
            source, f"not an OpenAPI 3.x or Swagger 2.0 document (version {found!r})"
        )
    if not isinstance(document.get("paths", {}), Mapping):
        raise CatalogSourceError(source, "'paths' must be an object")
    return version


def info_of(document: Mapping[str, Any]) -> Mapping[str, Any]:
    info = document.get("info")
    return info if isinstance(info, Mapping) else {}


def api_title(document: Mapping[str, Any], fallback: str) -> str:
    """The API's display name: ``info.title``, else ``fallback`` (the file stem)."""
    title = info_of(document).get("title")
    return title.strip() if isinstance(title, str) and title.strip() else fallback
