"""The hooks the core emits through, and the one observer that may listen.

The loop, the models, the tool-calling manager, the tool augmenter and the search run
call the functions here at fixed points; none of them knows who listens. An observer (an
:class:`Observer`: OpenTelemetry tracing in :mod:`toolsearch.telemetry`, attached by
``import toolsearch``; a test's recorder) attaches with :func:`attach_observer`. With none
attached every hook calls straight through, so this module imports nothing and costs one
global read per hook.

The hook points:

* :func:`chat_client_call` / :func:`chat_client_acall` / :func:`chat_client_stream` /
  :func:`chat_client_astream`: one ``ChatClient`` request (``toolsearch/loop/client.py``);
* :func:`model_class_defined`: every ``BaseChatModel`` subclass, when it is defined
  (``toolsearch/chat/model.py``); an observer attached later is shown the classes defined
  before it;
* :func:`tool_span`: one tool execution (``ToolCallingManager.execute_one`` /
  ``aexecute_one``);
* :func:`annotate_tool_span`: a fact about the running tool (``AugmentedToolCallback``);
* :func:`search_span`: one query of the search tool (``SearchRun``), the one search path
  of every front door.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeAlias, runtime_checkable

# The hooks name what they carry (a ``Prompt``, a ``ToolCallback``, a ``ToolCall``) as
# ``Any``: this module stands below the chat and tools layers that call it, and importing
# their types, even for checking only, would make it stand above them.
Prompt: TypeAlias = Any
ToolCall: TypeAlias = Any
ToolCallback: TypeAlias = Any

__all__ = [
    "Observer",
    "SearchObservation",
    "ToolObservation",
    "annotate_tool_span",
    "attach_observer",
    "attached_observer",
    "warm_up_observer",
    "chat_client_acall",
    "chat_client_astream",
    "chat_client_call",
    "chat_client_stream",
    "hash_session_id",
    "model_class_defined",
    "search_span",
    "tool_span",
]


def hash_session_id(session_id: str) -> str:
    """The form a session id takes in spans and logs: 16 hex digits of its sha256.

    The id is encoded with ``surrogatepass``: a conversation id holding a lone surrogate
    (``"\\ud800"``, which a JSON body can carry) hashes like any other id, still one
    digest per distinct id, instead of raising ``UnicodeEncodeError`` out of ``.call()``."""
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@runtime_checkable
class ToolObservation(Protocol):
    """What the tool-calling manager reports about one tool execution."""

    def result(self, text: str) -> None: ...

    def failed(self, exc: BaseException) -> None: ...


@runtime_checkable
class SearchObservation(Protocol):
    """What the search run reports about one query."""

    def hits(
        self,
        names: Sequence[str],
        scores: Sequence[float | None],
        *,
        search_type: str | None,
        total_matches: int,
    ) -> None: ...

    def error(self, code: str) -> None: ...


@runtime_checkable
class Observer(Protocol):
    """One listener to every hook point; each method wraps or records one event.

    The wrapping methods must run what they are given exactly once and hand its result
    (or its exception) back unchanged: an observer sees the core, it never steers it.
    """

    def chat_client_call(
        self,
        model: Any,
        prompt: Prompt,
        advisors: Sequence[Any],
        run: Callable[[], Any],
        *,
        conversation_id: str | None = None,
    ) -> Any: ...

    async def chat_client_acall(
        self,
        model: Any,
        prompt: Prompt,
        advisors: Sequence[Any],
        run: Callable[[], Any],
        *,
        conversation_id: str | None = None,
    ) -> Any: ...

    def chat_client_stream(
        self,
        model: Any,
        prompt: Prompt,
        advisors: Sequence[Any],
        open_stream: Callable[[], Iterator[Any]],
        *,
        conversation_id: str | None = None,
    ) -> Iterator[Any]: ...

    def chat_client_astream(
        self,
        model: Any,
        prompt: Prompt,
        advisors: Sequence[Any],
        open_stream: Callable[[], AsyncIterator[Any]],
        *,
        conversation_id: str | None = None,
    ) -> AsyncIterator[Any]: ...

    def model_class_defined(self, cls: type) -> None: ...

    def tool_span(
        self, callback: ToolCallback, call: ToolCall
    ) -> AbstractContextManager[ToolObservation]: ...

    def annotate_tool_span(self, key: str, value: Callable[[], Any]) -> None: ...

    def search_span(
        self,
        index: Any,
        *,
        session_id: str,
        query: str,
        limit: int,
        visible_tools: int | None = None,
        registered_tools: int | None = None,
        door: str | None = None,
        loaded_tokens: int | None = None,
    ) -> AbstractContextManager[SearchObservation]: ...


_observer: Observer | None = None
_model_classes: weakref.WeakSet[type] = weakref.WeakSet()
_lock = threading.Lock()


def attach_observer(observer: Observer | None) -> Observer | None:
    """Make ``observer`` the one listener (``None`` detaches); returns the one it replaced.

    The model classes defined so far are shown to the new observer at once, so attaching
    after the adapters were imported instruments them too.
    """
    global _observer
    with _lock:
        previous, _observer = _observer, observer
        known = list(_model_classes)
    if observer is not None:
        for cls in known:
            observer.model_class_defined(cls)
    return previous


def warm_up_observer() -> None:
    """Let the attached observer load what its first hook would load lazily (an optional
    ``warm_up()`` method: OpenTelemetry's API), so a front door's first request loads
    nothing on an event loop. Nothing when no observer is attached or it has none."""
    warm = getattr(_observer, "warm_up", None)
    if callable(warm):
        warm()


def attached_observer() -> Observer | None:
    """The listener attached now, if any."""
    return _observer


# -- hook points: each calls straight through when no observer listens --------------------


def chat_client_call(
    model: Any,
    prompt: Prompt,
    advisors: Sequence[Any],
    run: Callable[[], Any],
    *,
    conversation_id: str | None = None,
) -> Any:
    """Run one blocking ``ChatClient`` request (``run()``) under the observer;
    ``conversation_id``: the conversation the request names, if any."""
    observer = _observer
    if observer is None:
        return run()
    return observer.chat_client_call(model, prompt, advisors, run, conversation_id=conversation_id)


async def chat_client_acall(
    model: Any,
    prompt: Prompt,
    advisors: Sequence[Any],
    run: Callable[[], Any],
    *,
    conversation_id: str | None = None,
) -> Any:
    """Async twin of :func:`chat_client_call` (``run()`` returns an awaitable)."""
    observer = _observer
    if observer is None:
        return await run()
    return await observer.chat_client_acall(
        model, prompt, advisors, run, conversation_id=conversation_id
    )


def chat_client_stream(
    model: Any,
    prompt: Prompt,
    advisors: Sequence[Any],
    open_stream: Callable[[], Iterator[Any]],
    *,
    conversation_id: str | None = None,
) -> Iterator[Any]:
    """The responses of a streamed ``ChatClient`` request, through the observer."""
    observer = _observer
    if observer is None:
        return open_stream()
    return observer.chat_client_stream(
        model, prompt, advisors, open_stream, conversation_id=conversation_id
    )


def chat_client_astream(
    model: Any,
    prompt: Prompt,
    advisors: Sequence[Any],
    open_stream: Callable[[], AsyncIterator[Any]],
    *,
    conversation_id: str | None = None,
) -> AsyncIterator[Any]:
    """Async twin of :func:`chat_client_stream`."""
    observer = _observer
    if observer is None:
        return open_stream()
    return observer.chat_client_astream(
        model, prompt, advisors, open_stream, conversation_id=conversation_id
    )


def model_class_defined(cls: type) -> None:
    """A chat-model class was defined: remember it, and show it to the observer."""
    with _lock:
        _model_classes.add(cls)
        observer = _observer
    if observer is not None:
        observer.model_class_defined(cls)


class _Unobserved:
    """The observation of an event nobody listens to: every report is dropped."""

    __slots__ = ()

    def result(self, text: str) -> None:
        pass

    def failed(self, exc: BaseException) -> None:
        pass

    def hits(self, *args: Any, **kwargs: Any) -> None:
        pass

    def error(self, code: str) -> None:
        pass

    def __enter__(self) -> _Unobserved:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


_UNOBSERVED = _Unobserved()


def tool_span(callback: ToolCallback, call: ToolCall) -> AbstractContextManager[ToolObservation]:
    """A context manager around one tool execution; yields what to report to."""
    observer = _observer
    return _UNOBSERVED if observer is None else observer.tool_span(callback, call)


def annotate_tool_span(key: str, value: Callable[[], Any]) -> None:
    """A fact about the running tool; ``value`` is computed only if the observer wants it."""
    observer = _observer
    if observer is not None:
        observer.annotate_tool_span(key, value)


def search_span(
    index: Any,
    *,
    session_id: str,
    query: str,
    limit: int,
    visible_tools: int | None = None,
    registered_tools: int | None = None,
    door: str | None = None,
    loaded_tokens: int | None = None,
) -> AbstractContextManager[SearchObservation]:
    """A context manager around one search-tool query; yields what to report to."""
    observer = _observer
    if observer is None:
        return _UNOBSERVED
    return observer.search_span(
        index,
        session_id=session_id,
        query=query,
        limit=limit,
        visible_tools=visible_tools,
        registered_tools=registered_tools,
        door=door,
        loaded_tokens=loaded_tokens,
    )
