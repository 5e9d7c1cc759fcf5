"""``manifest.json``: what a catalog index holds, how it was built, and how to check it.

The manifest is the one file a loader trusts. It records the format version, the index kind,
the embedder (name and dimension) for vector and hybrid indexes, counts, the build settings,
the command that rebuilds the index, and every artifact file with its size and sha256.

Per-tool fingerprints live in ``fingerprints.npy`` (raw sha256 digests in tool order) rather
than in the JSON itself: 125,000 hex fingerprints would make every load parse ~9 MB of JSON.
The manifest lists that file with its checksum like every other artifact, and also carries
``fingerprints_digest`` (sha256 over all fingerprints in order) so two builds of the same
catalog can be compared from their manifests alone.

**Checking on load.** Loading always checks the manifest's own checksum and that every
listed file exists and has the recorded size: cheap, and it catches edited manifests,
truncated copies and half-written files. The sha256 of every artifact is checked on load
when the artifacts total at most ``CHECKSUM_AT_LOAD_BYTES`` (reading them costs less than
a few tens of milliseconds), so a small index is correct or refused; a larger one reads
every byte only when asked: ``CatalogIndex.load(path, verify=True)`` or ``toolsearch index
info PATH --verify`` (a damaged byte there shows as an ``IndexCorruptedError`` during a
search when the structure breaks, or as different results when it does not).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsearch.errors import IndexCorruptedError, IndexNotFoundError, ManifestMismatchError
from toolsearch.indexes.kinds import catalog_kind_names

__all__ = [
    "FORMAT_VERSION",
    "MANIFEST_NAME",
    "FileEntry",
    "Manifest",
    "file_sha256",
    "read_manifest",
    "rebuild_command",
    "verify_files",
]

FORMAT_VERSION = 1
"""The artifact layout this toolsearch writes and reads."""

MANIFEST_NAME = "manifest.json"


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One artifact file: its size in bytes and its sha256 (hex)."""

    size: int
    sha256: str


@dataclass(frozen=True)
class Manifest:
    """The parsed ``manifest.json`` of a catalog index."""

    format_version: int
    kind: str
    embedder: Mapping[str, Any] | None
    counts: Mapping[str, int]
    settings: Mapping[str, Any]
    files: Mapping[str, FileEntry]
    fingerprints_digest: str = ""
    sources: tuple[str, ...] = ()
    build_command: str = ""
    created_at: str = ""
    toolsearch_version: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tool_count(self) -> int:
        return int(self.counts.get("tools", 0))

    @property
    def embedder_name(self) -> str | None:
        return None if not self.embedder else str(self.embedder.get("name"))

    @property
    def embedder_dimension(self) -> int | None:
        return None if not self.embedder else int(self.embedder.get("dimension", 0))

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": self.format_version,
            "kind": self.kind,
            "embedder": dict(self.embedder) if self.embedder else None,
            "counts": dict(self.counts),
            "settings": dict(self.settings),
            "fingerprints_digest": self.fingerprints_digest,
            "sources": list(self.sources),
            "build_command": self.build_command,
            "created_at": self.created_at,
            "toolsearch_version": self.toolsearch_version,
            "files": {
                name: {"size": entry.size, "sha256": entry.sha256}
                for name, entry in sorted(self.files.items())
            },
            **dict(self.extra),
        }

    def write(self, folder: Path) -> None:
        data = self.to_json()
        data[DIGEST_KEY] = _digest(data)
        text = json.dumps(data, indent=2, sort_keys=False) + "\n"
        (folder / MANIFEST_NAME).write_text(text, encoding="utf-8")


DIGEST_KEY = "manifest_sha256"
"""The manifest's own checksum: sha256 of its other fields as canonical JSON. An edited
manifest (a count, a setting, the kind, the embedder) is a corrupted index, not an index
that searches differently. Manifests written before it existed have none and are read as
they are."""


def _digest(data: dict[str, Any]) -> str:
    fields = {k: v for k, v in data.items() if k != DIGEST_KEY}
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def rebuild_command(path: str | Path, manifest: Manifest | None = None) -> str:
    """The command that rebuilds the index at ``path`` (from its manifest when readable)."""
    if manifest is not None and manifest.build_command:
        return manifest.build_command
    kind = manifest.kind if manifest is not None else "bm25|vector|hybrid"
    return f"toolsearch index build SOURCE... --kind {kind} --out {path}"


def file_sha256(path: Path, *, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _known_keys() -> set[str]:
    return {
        "format_version",
        "kind",
        "embedder",
        "counts",
        "settings",
        "fingerprints_digest",
        "sources",
        "build_command",
        "created_at",
        "toolsearch_version",
        "files",
        DIGEST_KEY,
    }


def read_manifest(path: str | Path) -> Manifest:
    """Parse ``path/manifest.json``; raise the documented errors when it cannot be used.

    Raises:
        IndexNotFoundError: ``path`` is not a folder or has no ``manifest.json``.
        IndexCorruptedError: the manifest is not valid JSON or lacks required fields.
        ManifestMismatchError: the index uses another (e.g. newer) format version.
    """
    folder = Path(path)
    target = folder / MANIFEST_NAME
    if not target.is_file():
        what = "no such folder" if not folder.exists() else f"no {MANIFEST_NAME} in it"
        raise IndexNotFoundError(str(folder), f"{what}; build one with: {rebuild_command(folder)}")
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise TypeError("the manifest is not a JSON object")
        version = int(data["format_version"])
        recorded = data.get(DIGEST_KEY)
        # another format may checksum differently: the version decides first (below)
        if version == FORMAT_VERSION and recorded is not None and recorded != _digest(data):
            raise ValueError("its checksum does not match its content: it was edited")
        kind = str(data["kind"])
        _check_shape(data)
        files = {
            str(name): FileEntry(int(entry["size"]), str(entry["sha256"]))
            for name, entry in dict(data["files"]).items()
        }
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexCorruptedError(
            str(folder),
            f"{MANIFEST_NAME} is unreadable ({exc}); rebuild with: {rebuild_command(folder)}",
        ) from exc
    manifest = Manifest(
        format_version=version,
        kind=kind,
        embedder=data.get("embedder"),
        counts=dict(data.get("counts") or {}),
        settings=dict(data.get("settings") or {}),
        files=files,
        fingerprints_digest=str(data.get("fingerprints_digest") or ""),
        sources=tuple(str(s) for s in data.get("sources") or ()),
        build_command=str(data.get("build_command") or ""),
        created_at=str(data.get("created_at") or ""),
        toolsearch_version=str(data.get("toolsearch_version") or ""),
        extra={k: v for k, v in data.items() if k not in _known_keys()},
    )
    if version != FORMAT_VERSION:
        newer = version > FORMAT_VERSION
        advice = (
            "upgrade toolsearch, or rebuild it with this version: "
            if newer
            else "rebuild it with this version: "
        )
        raise ManifestMismatchError(
            str(folder),
            f"built with catalog format {version}, this toolsearch reads format "
            f"{FORMAT_VERSION}; {advice}{rebuild_command(folder, manifest)}",
        )
    if kind not in catalog_kind_names():
        raise IndexCorruptedError(
            str(folder),
            f"unknown index kind {kind!r}; rebuild with: {rebuild_command(folder, manifest)}",
        )
    return manifest


_TEXT_SETTINGS = frozenset({"index", "fusion"})
_FLAG_SETTINGS = frozenset({"query_clauses"})
_OPTIONAL_SETTINGS = frozenset({"min_score"})
"""Settings that are not plain numbers (every other one is: a boolean or a string where a
number belongs would be read as 1.0 or parsed, silently changing the results)."""


def _kind_of(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _check_shape(data: dict[str, Any]) -> None:
    """Every field the index reads has its JSON type, so a manifest edited and checksummed
    again fails here with the field named (``ValueError``, reported as
    :class:`IndexCorruptedError`) instead of a bare ``TypeError`` from deep in the load
    (issue 47)."""

    def expect(ok: bool, field: str, what: str, value: Any) -> None:
        if not ok:
            raise ValueError(f"'{field}' must be {what}, not {_kind_of(value)} {value!r:.40}")

    for name in ("counts", "settings", "files"):
        expect(isinstance(data.get(name), dict), name, "an object", data.get(name))
    for name, count in data["counts"].items():
        ok = isinstance(count, int) and not isinstance(count, bool) and count >= 0
        expect(ok, f"counts.{name}", "a non-negative integer", count)
    for name, section in data["settings"].items():
        if name == "build_seconds":
            continue
        expect(isinstance(section, dict), f"settings.{name}", "an object", section)
        for key, value in section.items():
            field = f"settings.{name}.{key}"
            if key in _TEXT_SETTINGS:
                expect(isinstance(value, str), field, "a string", value)
            elif key in _FLAG_SETTINGS:
                expect(isinstance(value, bool), field, "a boolean", value)
            elif not (key in _OPTIONAL_SETTINGS and value is None):
                number = isinstance(value, int | float) and not isinstance(value, bool)
                expect(number and math.isfinite(value), field, "a finite number", value)
    for name, entry in data["files"].items():
        expect(isinstance(entry, dict), f"files.{name}", "an object", entry)
        size, digest = entry.get("size"), entry.get("sha256")
        ok = isinstance(size, int) and not isinstance(size, bool) and size >= 0
        expect(ok, f"files.{name}.size", "a non-negative integer", size)
        expect(isinstance(digest, str), f"files.{name}.sha256", "a string", digest)
    embedder = data.get("embedder")
    expect(embedder is None or isinstance(embedder, dict), "embedder", "an object", embedder)
    if embedder:
        dimension = embedder.get("dimension")
        ok = isinstance(dimension, int) and not isinstance(dimension, bool) and dimension > 0
        expect(ok, "embedder.dimension", "a positive integer", dimension)
        expect(isinstance(embedder.get("name"), str), "embedder.name", "a string", embedder)
    sources = data.get("sources")
    ok = sources is None or (isinstance(sources, list) and all(isinstance(x, str) for x in sources))
    expect(ok, "sources", "a list of strings", sources)
    for name in ("fingerprints_digest", "build_command", "created_at", "toolsearch_version"):
        value = data.get(name)
        expect(value is None or isinstance(value, str), name, "a string", value)


CHECKSUM_AT_LOAD_BYTES = 32 << 20
"""Artifacts up to this many bytes in all are checksummed on every load (see the module)."""


def verify_files(folder: str | Path, manifest: Manifest, *, checksums: bool | None = False) -> None:
    """Check every artifact the manifest lists: present, right size, and (``checksums``)
    right sha256; ``checksums=None`` checksums when the artifacts total at most
    ``CHECKSUM_AT_LOAD_BYTES``. Raises :class:`IndexCorruptedError` naming the first bad
    file."""
    root = Path(folder)
    if checksums is None:
        checksums = sum(entry.size for entry in manifest.files.values()) <= CHECKSUM_AT_LOAD_BYTES
    for name, entry in sorted(manifest.files.items()):
        target = root / name
        try:
            size = os.stat(target).st_size
        except OSError:
            problem = f"artifact {name} is missing"
        else:
            if size != entry.size:
                problem = f"artifact {name} has {size} bytes, the manifest says {entry.size}"
            elif checksums and file_sha256(target) != entry.sha256:
                problem = f"artifact {name} does not match its sha256 in the manifest"
            else:
                continue
        raise IndexCorruptedError(
            str(root), f"{problem}; rebuild with: {rebuild_command(root, manifest)}"
        )
