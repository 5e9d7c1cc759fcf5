"""Names of API embedders: ``PROVIDER:MODEL[?dimensions=N&base_url=URL]``.

A name says everything that changes a vector: the provider, the model, ``dimensions`` and,
unless it is the provider's own, the endpoint (scheme, host, port and path; never
credentials). llama.cpp's server ignores the ``model`` field, so only its address tells two
of them apart. :class:`ApiEmbedderSpec` parses a name, resolves the endpoint a spec without
``base_url`` means (``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``, else the provider's),
and creates the embedder (:mod:`toolsearch.indexes.embedders.api`); the embedders report
their names through :func:`embedder_name`, so a recorded name resolves back to the same
embedder. Nothing here imports an SDK.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

__all__ = [
    "API_PROVIDERS",
    "GEMINI",
    "OPENAI",
    "ApiEmbedderSpec",
    "ApiProvider",
    "canonical_url",
    "embedder_name",
    "environment_url",
    "model_name",
]


@dataclass(frozen=True)
class ApiProvider:
    """What differs between the providers' endpoints, keys and packages."""

    name: str
    default_url: str
    url_env: str
    key_envs: tuple[str, ...]
    module: str
    package: str
    extra: str


OPENAI = ApiProvider(
    "openai",
    "https://api.openai.com/v1",
    "OPENAI_BASE_URL",
    ("OPENAI_API_KEY",),
    "openai",
    "openai",
    "openai-embeddings",
)
GEMINI = ApiProvider(
    "gemini",
    "https://generativelanguage.googleapis.com",
    "GOOGLE_GEMINI_BASE_URL",
    ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "google.genai",
    "google-genai",
    "gemini-embeddings",
)
_PROVIDERS = {provider.name: provider for provider in (OPENAI, GEMINI)}

API_PROVIDERS: tuple[str, ...] = tuple(_PROVIDERS)
"""The prefixes of API embedder names (``openai:MODEL``, ``gemini:MODEL``)."""


def canonical_url(url: str, provider: ApiProvider) -> str | None:
    """``url`` as names carry it (scheme and host lower-cased, no credentials, query or
    trailing slash), or ``None`` when it is the provider's own endpoint."""
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"base_url {url!r} has an invalid port") from exc
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url {url!r} is not an http:// or https:// URL")
    host = parts.hostname  # lower-cased, credentials dropped
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    canonical = urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), "", ""))
    return None if canonical == provider.default_url else canonical


def environment_url(provider: ApiProvider) -> str | None:
    """The endpoint the environment names (``OPENAI_BASE_URL``...), canonical; ``None``
    for the provider's own."""
    configured = os.environ.get(provider.url_env, "").strip()
    return canonical_url(configured, provider) if configured else None


def model_name(provider: ApiProvider, model: str) -> str:
    model = model.strip()
    if provider is GEMINI:
        model = model.removeprefix("models/")
    if not model or "?" in model:
        raise ValueError(f"{provider.name} embedder model {model!r} is empty or holds a '?'")
    return model


def embedder_name(
    provider: ApiProvider, model: str, dimensions: int | None, endpoint: str | None
) -> str:
    options = []
    if dimensions is not None:
        options.append(f"dimensions={dimensions}")
    if endpoint is not None:
        options.append(f"base_url={quote(endpoint, safe=':/[]')}")
    return f"{provider.name}:{model}" + (f"?{'&'.join(options)}" if options else "")


@dataclass(frozen=True)
class ApiEmbedderSpec:
    """An API embedder as its name spells it: ``PROVIDER:MODEL[?dimensions=N&base_url=URL]``.

    Without ``base_url`` a spec you write embeds at the environment's endpoint
    (``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``) or the provider's own; a name an index
    recorded without one means the provider's own (:meth:`check_environment`).
    """

    provider: str
    model: str
    dimensions: int | None = None
    base_url: str | None = field(default=None, repr=False)  # it may hold credentials

    @classmethod
    def parse(cls, spec: str) -> ApiEmbedderSpec | None:
        """The spec ``spec`` spells, ``None`` if it names no API provider; ``ValueError``
        for a malformed one."""
        prefix, colon, rest = spec.strip().partition(":")
        provider = _PROVIDERS.get(prefix)
        if not colon or provider is None:
            return None
        model, _, query = rest.partition("?")
        usage = f"write {prefix}:MODEL, optionally ?dimensions=N&base_url=URL"
        if not model.strip():
            raise ValueError(f"embedder {spec!r} names no model: {usage}")
        try:
            options = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
        except ValueError:
            raise ValueError(f"embedder {spec!r}: options do not parse; {usage}") from None
        dimensions: int | None = None
        base_url: str | None = None
        for key, value in options:
            if key == "dimensions" and value.isdigit() and int(value) > 0:
                dimensions = int(value)
            elif key == "base_url" and value:
                canonical_url(value, provider)  # a malformed URL fails now
                base_url = value
            else:
                raise ValueError(f"embedder {spec!r}: bad option {key}={value!r}; {usage}")
        return cls(prefix, model_name(provider, model), dimensions, base_url)

    @property
    def endpoint(self) -> str | None:
        """Where this spec embeds, canonical (``None``: the provider's own)."""
        provider = _PROVIDERS[self.provider]
        if self.base_url is not None:
            return canonical_url(self.base_url, provider)
        return environment_url(provider)

    @property
    def name(self) -> str:
        """The name the embedder this spec creates reports (the endpoint resolved now)."""
        return embedder_name(_PROVIDERS[self.provider], self.model, self.dimensions, self.endpoint)

    def check_environment(self) -> None:
        """For a *recorded* name (an index manifest, a Milvus collection): ``ValueError``
        unless this machine's environment names the endpoint it records. A recorded name
        never chooses where queries (and the API key) go; the environment does."""
        provider = _PROVIDERS[self.provider]
        recorded = canonical_url(self.base_url, provider) if self.base_url else None
        current = environment_url(provider)
        if recorded != current:
            wanted = recorded or provider.default_url
            name = embedder_name(provider, self.model, self.dimensions, recorded)
            raise ValueError(
                f"embedder {name!r} embeds at {wanted}, but {provider.url_env} names "
                f"{current or 'the provider default'} here; set {provider.url_env}={wanted} "
                "to use that endpoint, or pass the embedder yourself"
            )
