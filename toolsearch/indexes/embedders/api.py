"""API embedders: :class:`OpenAIEmbedder` (any OpenAI-compatible ``/embeddings``) and
:class:`GeminiEmbedder` (Google's Gemini API), through the official SDKs.

Both are :class:`~toolsearch.indexes.embedders.Embedder`\\ s, so the vector, hybrid,
catalog and Milvus indexes take them like any local model, and both are named in settings
and on the command line (:mod:`toolsearch.indexes.specs`)::

    openai:text-embedding-3-small
    openai:text-embedding-3-large?dimensions=256
    openai:nomic-embed-text?base_url=http://127.0.0.1:8080/v1
    gemini:gemini-embedding-001?dimensions=768

What they share (:class:`ApiEmbedder`):

* **Batches**: documents go ``batch_size`` texts per request; repeated texts go once.
* **Retries**: a failure that may pass (HTTP 429, 408, 409, 5xx, a refused connection, a
  timeout) is retried ``max_retries`` times, waiting ``retry_backoff`` seconds (with
  jitter), doubling up to 30 s, or what the server asked for (``Retry-After``, Google's
  ``RetryInfo``; asking for more than 60 s ends the attempts: that is a quota, not a
  blip); the SDK's own retries are off, so the two never multiply.
  What is left is an :class:`~toolsearch.errors.EmbeddingApiError` naming the endpoint and
  model (never the key): registering tools or a build fails with it, a search hands it to
  the model as an ``index_unavailable`` result.
* **A document cache on disk** (:class:`~toolsearch.indexes.embedders.cache.EmbeddingCache`)
  keyed by the embedder's name and the sha256 of each text: a catalog is embedded once per
  model, however often it is rebuilt or registered. Query vectors stay in memory (an LRU):
  they are user content.
* **Unit vectors**: every vector is normalised to length 1 (Gemini's reduced dimensions are
  not), so inner product is cosine similarity, as the indexes assume.
* **A name that says what changes a vector** (:mod:`toolsearch.indexes.embedders.api_names`):
  provider, model, ``dimensions`` and, unless it is the provider's own, the endpoint.
  Index artifacts record the name, and the cache files vectors under it.

The vector length is learnt from the first answer (or is ``dimensions``) and recorded in
the cache, so a process that finds everything cached makes no request at all.
"""

from __future__ import annotations

import importlib
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

from toolsearch.errors import (
    EmbeddingApiError,
    MissingExtraError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
)
from toolsearch.indexes.embedders.api_names import (
    GEMINI,
    OPENAI,
    ApiEmbedderSpec,
    ApiProvider,
    canonical_url,
    embedder_name,
    model_name,
)
from toolsearch.indexes.embedders.cache import (
    CacheOption,
    cache_from_option,
    text_key,
)
from toolsearch.indexes.embedders.local import _normalize, _QueryCache

__all__ = ["ApiEmbedder", "GeminiEmbedder", "OpenAIEmbedder"]

_log = logging.getLogger(__name__)

Task = Literal["document", "query"]

MAX_BACKOFF = 30.0
"""The longest wait between two attempts of our own choosing."""
MAX_RETRY_AFTER = 60.0
"""The longest ``Retry-After`` waited for; a server asking for more ends the attempts."""
_PROBE_TEXT = "dimension probe"
"""Embedded (and cached) when the vector length is asked for before any vector was made."""


# -- the shared embedder -------------------------------------------------------------------


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:
        raise MissingExtraError("API embedders", "openai-embeddings", "numpy") from exc
    return numpy


class ApiEmbedder:
    """Batching, retries, the disk cache, the query LRU and normalisation over one API;
    a subclass sends one batch (:meth:`_send`) and maps its SDK's errors (:meth:`_translate`).

    Counters (per object; tests and logs read them): ``requests`` (attempts made),
    ``embedded`` (texts sent in successful requests), ``cache_hits`` (texts found in the
    disk cache).
    """

    provider: ClassVar[ApiProvider]

    default_batch_size = 128
    """Texts per request when ``batch_size`` is not given (the provider's limit or less)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int | None = None,
        max_retries: int = 4,
        retry_backoff: float = 0.5,
        timeout: float = 60.0,
        cache: CacheOption = True,
        client: Any = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        provider = self.provider
        batch_size = self.default_batch_size if batch_size is None else batch_size
        if dimensions is not None and dimensions < 1:
            raise ValueError(f"dimensions must be at least 1, not {dimensions}")
        if batch_size < 1 or max_retries < 0 or retry_backoff < 0 or timeout <= 0:
            raise ValueError("batch_size >= 1, max_retries >= 0, retry_backoff >= 0, timeout > 0")
        try:
            self._sdk = importlib.import_module(provider.module)
        except ImportError as exc:
            raise MissingExtraError(type(self).__name__, provider.extra, provider.package) from exc
        _numpy()
        self.model = model_name(provider, model)
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.timeout = timeout
        self._base_url = base_url or os.environ.get(provider.url_env, "").strip() or None
        if base_url is None and client is not None:
            self._base_url = self._client_url(client) or self._base_url
        self._endpoint = canonical_url(self._base_url, provider) if self._base_url else None
        self._api_key = api_key
        self._client = client
        self._client_lock = threading.Lock()
        self._name = embedder_name(provider, self.model, dimensions, self._endpoint)
        self.cache = cache_from_option(cache)
        self._sleep = sleep or time.sleep
        self._dimension: int | None = dimensions
        self._queries = _QueryCache()
        self._lock = threading.Lock()
        self.requests = 0
        self.embedded = 0
        self.cache_hits = 0

    # -- identity --------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """``PROVIDER:MODEL[?dimensions=N&base_url=URL]``: see the module docs."""
        return self._name

    @property
    def url(self) -> str:
        """The endpoint requests go to (no credentials)."""
        return self._endpoint or self.provider.default_url

    @property
    def dimension(self) -> int:
        """The vector length: ``dimensions``, else the one the cache recorded, else learnt
        from one request (a probe text, cached like any document)."""
        known = self._known_dimension()
        if known is None:
            self.embed_documents([_PROBE_TEXT])
            known = self._dimension
        assert known is not None
        return known

    def _known_dimension(self) -> int | None:
        if self._dimension is None and self.cache is not None:
            self._dimension = self.cache.dimension(self._name)
        return self._dimension

    # -- embedding -------------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str]) -> Any:
        """Unit vectors of ``texts`` (one row each): cached ones from disk, the rest in
        batches of ``batch_size``, each batch stored as it arrives. Blank texts get a zero
        vector without a request."""
        np = _numpy()
        texts = list(texts)
        keys = [text_key(text) for text in texts]
        pending = {key: text for key, text in zip(keys, texts, strict=True) if text.strip()}
        found: dict[bytes, Any] = {}
        known = self._known_dimension()
        if pending and known is not None and self.cache is not None:
            found = self.cache.get_many(self._name, list(pending), known)
            with self._lock:
                self.cache_hits += sum(1 for key in keys if key in found)
        missing = [(key, text) for key, text in pending.items() if key not in found]
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start : start + self.batch_size]
            rows = self._embed_batch([text for _, text in chunk], "document")
            chunk_keys = [key for key, _ in chunk]
            if self.cache is not None:
                self.cache.put_many(self._name, chunk_keys, rows)
            found.update(zip(chunk_keys, rows, strict=True))
        matrix = np.zeros((len(texts), self.dimension if texts else self._dimension or 0), "f4")
        for i, key in enumerate(keys):
            row = found.get(key)
            if row is not None:
                matrix[i] = row
        return matrix

    def embed_query(self, text: str) -> Any:
        """The unit vector of a query (a retrieval query for providers that tell the two
        apart); kept in a per-object LRU, never on disk."""
        found = self._queries.get(text)
        if found is None:
            if text.strip():
                found = self._embed_batch([text], "query")[0]
            else:
                found = _numpy().zeros(self.dimension, dtype="f4")
            self._queries.put(text, found)
        return found

    def clear_query_cache(self) -> None:
        """Forget the query vectors held in memory."""
        self._queries.clear()

    def _embed_batch(self, texts: list[str], task: Task) -> Any:
        np = _numpy()
        answer = self._with_retries(lambda: self._send(texts, task))
        try:
            matrix = np.asarray(answer, dtype=np.float32)
        except (TypeError, ValueError):
            raise self._unusable("vectors of different lengths or not numbers") from None
        if matrix.ndim != 2 or matrix.shape[0] != len(texts) or matrix.shape[1] == 0:
            raise self._unusable(f"{len(answer)} vectors for {len(texts)} texts")
        bad = ~np.isfinite(matrix).all(axis=1)
        if bad.any():  # checked before anything is cached: a bad answer is never served again
            raise self._unusable(
                f"{int(bad.sum())} of {len(texts)} vectors hold NaN or infinite values"
            )
        self._check_dimension(int(matrix.shape[1]))
        with self._lock:
            self.embedded += len(texts)
        return _normalize(matrix)

    def _check_dimension(self, found: int) -> None:
        if self.dimensions is not None and found != self.dimensions:
            raise self._unusable(
                f"asked for {self.dimensions}-d vectors, got {found}-d: the endpoint ignores "
                "`dimensions`; leave it out for this model"
            )
        with self._lock:
            known = self._known_dimension()
            if known is not None and known != found:
                self._dimension = None
                if self.cache is not None:
                    self.cache.clear(self._name)
                raise self._unusable(
                    f"{found}-d vectors where this name had {known}-d ones: the model behind "
                    f"{self._name!r} changed. Its cached vectors were dropped; embed again, "
                    "and rebuild the indexes made with the old ones"
                )
            self._dimension = found

    # -- requests --------------------------------------------------------------------------

    def _with_retries(self, send: Callable[[], Any]) -> Any:
        from toolsearch.models._provider import provider_errors

        delay = self.retry_backoff
        attempt = 0
        while True:
            attempt += 1
            with self._lock:
                self.requests += 1
            try:
                with provider_errors(self.provider.name, self._translate):
                    return send()
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                # an HTTP 200 whose body is not JSON, or JSON without the vectors: the SDK
                # raises a decoding error, the reading of its answer a lookup error
                detail = self._redact(f"{type(exc).__name__}: {exc}")[:300]
                raise self._unusable(
                    f"an answer that is not an embeddings response ({detail})"
                ) from exc
            except ProviderError as exc:
                wait = exc.retry_after
                if (
                    not exc.retryable
                    or attempt > self.max_retries
                    or (wait is not None and wait > MAX_RETRY_AFTER)  # a quota, not a blip
                ):
                    raise self._failure(exc, attempt) from exc
                if wait is None:
                    wait = random.uniform(delay / 2, delay)
                    delay = min(delay * 2, MAX_BACKOFF)
                _log.info(
                    "%s embeddings at %s failed (%s); retry %d of %d in %.2f s",
                    self.provider.name,
                    self.url,
                    self._redact(exc.provider_message),
                    attempt,
                    self.max_retries,
                    wait,
                )
                self._sleep(wait)

    def _failure(self, exc: ProviderError, attempts: int) -> EmbeddingApiError:
        status = f" (HTTP {exc.status_code})" if exc.status_code is not None else ""
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        hint = ""
        if isinstance(exc, ProviderAuthenticationError):
            keys = " or ".join(self.provider.key_envs)
            hint = f"; check the API key ({keys}, or api_key=)"
        elif isinstance(exc, ProviderConnectionError):
            hint = "; is the server running and the URL right?"
        elif exc.retry_after is not None and exc.retry_after > MAX_RETRY_AFTER:
            hint = f"; the server asks to wait {exc.retry_after:.0f} s before trying again"
        message = (
            f"{self.provider.name} embeddings at {self.url} (model {self.model!r}) failed"
            f"{status}{tries}: {self._redact(exc.provider_message).rstrip('. ')}{hint}"
        )
        return EmbeddingApiError(
            self.provider.name,
            self.url,
            message,
            status_code=exc.status_code,
            retryable=exc.retryable,
        )

    def _unusable(self, problem: str) -> EmbeddingApiError:
        return EmbeddingApiError(
            self.provider.name,
            self.url,
            f"{self.provider.name} embeddings at {self.url} (model {self.model!r}) answered "
            f"unusably: {problem}",
        )

    def _redact(self, text: str) -> str:
        """``text`` with every API key this embedder could send replaced by ``***``."""
        secrets = [self._api_key, *(os.environ.get(name) for name in self.provider.key_envs)]
        for secret in secrets:
            if secret and len(secret) >= 6:
                text = text.replace(secret, "***")
        return text

    def _placeholder_key(self) -> str | None:
        """The key to give the SDK: ``api_key``, else ``None`` (the SDK reads the
        environment), else ``"unused"`` for an endpoint of your own with no key set
        (local servers ignore it; the SDKs insist on one)."""
        if self._api_key is not None:
            return self._api_key
        if self._endpoint is not None and not any(
            os.environ.get(name) for name in self.provider.key_envs
        ):
            return "unused"
        return None

    @property
    def client(self) -> Any:
        """The SDK client (created on first use, so constructing needs no key)."""
        with self._client_lock:
            if self._client is None:
                self._client = self._make_client()
            return self._client

    def _make_client(self) -> Any:
        raise NotImplementedError

    def _client_url(self, client: Any) -> str | None:
        return None

    def _send(self, texts: list[str], task: Task) -> Any:
        """One request: the vectors of ``texts`` in order (lists of floats)."""
        raise NotImplementedError

    def _translate(self, exc: Exception) -> ProviderError | None:
        raise NotImplementedError

    def __repr__(self) -> str:
        where = f", base_url={self._endpoint!r}" if self._endpoint else ""
        size = f", dimensions={self.dimensions}" if self.dimensions is not None else ""
        return f"{type(self).__name__}({self.model!r}{where}{size})"


# -- the providers ---------------------------------------------------------------------------


class OpenAIEmbedder(ApiEmbedder):
    """Embeddings from OpenAI or any server that speaks its ``/v1/embeddings`` (llama.cpp's
    server, vLLM, Ollama, LM Studio, LiteLLM...). Needs ``toolsearch[openai-embeddings]``.

    Args:
        model: The model (``text-embedding-3-small``; whatever a local server serves).
        base_url: The API root, e.g. ``http://127.0.0.1:8080/v1``; default
            ``OPENAI_BASE_URL``, else OpenAI's.
        api_key: Default ``OPENAI_API_KEY``; with a ``base_url`` and no key set, a
            placeholder (local servers ignore it).
        dimensions: Ask for shorter vectors (``text-embedding-3-*``); part of the name.
        batch_size: Texts per request (the API takes up to 2,048 and 300,000 tokens).
        max_retries: Retries of a failure that may pass; see the module docs.
        retry_backoff: The first wait between attempts, in seconds (doubling).
        timeout: Seconds per request.
        cache: ``True`` (the default cache; see
            :func:`~toolsearch.indexes.embedders.cache.default_embedding_cache`), ``False``,
            a folder or an :class:`EmbeddingCache`.
        client: An ``openai.OpenAI`` to use as is (its own retries add to ours); its
            ``base_url`` names the endpoint unless ``base_url`` is given.
        sleep: What waits between attempts (tests pass a fake).
    """

    provider = OPENAI

    default_batch_size = 128

    def _make_client(self) -> Any:
        kwargs: dict[str, Any] = {"timeout": self.timeout, "max_retries": 0}
        key = self._placeholder_key()
        if key is not None:
            kwargs["api_key"] = key
        if self._base_url is not None:
            kwargs["base_url"] = self._base_url
        return self._sdk.OpenAI(**kwargs)

    def _client_url(self, client: Any) -> str | None:
        url = getattr(client, "base_url", None)
        return str(url) if url else None

    def _send(self, texts: list[str], task: Task) -> Any:
        arguments: dict[str, Any] = {
            "model": self.model,
            "input": texts,
            "encoding_format": "float",
        }
        if self.dimensions is not None:
            arguments["dimensions"] = self.dimensions
        response = self.client.embeddings.create(**arguments)
        data = sorted(response.data or [], key=lambda item: item.index)
        return [item.embedding for item in data]

    def _translate(self, exc: Exception) -> ProviderError | None:
        from toolsearch.models.openai import translate_openai_error as _translate

        return _translate(exc)


_GEMINI_TASKS = {"document": "RETRIEVAL_DOCUMENT", "query": "RETRIEVAL_QUERY"}


class GeminiEmbedder(ApiEmbedder):
    """Embeddings from Google's Gemini API (``batchEmbedContents``) through ``google-genai``,
    with ``RETRIEVAL_DOCUMENT`` / ``RETRIEVAL_QUERY`` task types. Needs
    ``toolsearch[gemini-embeddings]``.

    Args:
        model: The model (``gemini-embedding-001``...; a ``models/`` prefix is dropped).
        base_url: Another API root (a proxy, a local fake); default
            ``GOOGLE_GEMINI_BASE_URL``, else Google's.
        api_key: Default ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` (read by the SDK); with a
            ``base_url`` and no key set, a placeholder.
        dimensions: ``output_dimensionality`` (vectors are re-normalised); part of the name.
        batch_size: Texts per request (the API takes up to 100).
        max_retries, retry_backoff, timeout, cache, sleep: as for :class:`OpenAIEmbedder`.
        client: A ``google.genai.Client`` to use as is; pass ``base_url`` too when it
            points elsewhere than the default, since the endpoint is part of the name.
    """

    provider = GEMINI

    default_batch_size = 100

    def _make_client(self) -> Any:
        types = importlib.import_module("google.genai.types")
        options: dict[str, Any] = {"timeout": int(self.timeout * 1000)}
        if self._base_url is not None:
            options["base_url"] = self._base_url
        kwargs: dict[str, Any] = {"http_options": types.HttpOptions(**options)}
        key = self._placeholder_key()
        if key is not None:
            kwargs["api_key"] = key
        return self._sdk.Client(**kwargs)

    def _send(self, texts: list[str], task: Task) -> Any:
        types = importlib.import_module("google.genai.types")
        config = types.EmbedContentConfig(
            task_type=_GEMINI_TASKS[task], output_dimensionality=self.dimensions
        )
        response = self.client.models.embed_content(model=self.model, contents=texts, config=config)
        return [embedding.values for embedding in response.embeddings or []]

    def _translate(self, exc: Exception) -> ProviderError | None:
        from toolsearch.models.gemini import _translate

        return _translate(exc)


def create_embedder(spec: ApiEmbedderSpec) -> ApiEmbedder:
    """A new embedder for a parsed name (no request is made)."""
    kind = OpenAIEmbedder if spec.provider == "openai" else GeminiEmbedder
    return kind(spec.model, base_url=spec.base_url, dimensions=spec.dimensions)
