"""One redaction rule for every URL a user gives toolsearch (issue 34, item 4): the user
info and every query value never reach a message, a ``repr`` or a log line."""

from __future__ import annotations

import logging

import pytest

from toolsearch.urls import redact_url, scrub_urls

FORMS = [
    "redis://:s3cretpw@localhost:6379/0",
    "redis://alice:s3cretpw@localhost:6379/0",
    "rediss://localhost:6380/0?password=s3cretpw",
    "http://alice:s3cretpw@milvus.internal:19530",
    "https://milvus.example.com:443?token=s3cretpw",
    "unix:///tmp/redis.sock?password=s3cretpw&db=0",
]


@pytest.mark.parametrize("url", FORMS)
def test_every_documented_form_loses_its_secret(url: str) -> None:
    assert "s3cretpw" not in redact_url(url)
    assert "s3cretpw" not in scrub_urls(f"could not reach {url}: refused")


def test_the_rest_of_the_url_stays_readable() -> None:
    assert redact_url("redis://alice:pw1234@cache:6379/2") == "redis://***@cache:6379/2"
    assert redact_url("rediss://cache:6380/0?password=pw1234&ssl=true") == (
        "rediss://cache:6380/0?password=***&ssl=***"
    )


@pytest.mark.parametrize("url", [u for u in FORMS if u.startswith("redis")])
def test_a_redis_store_shows_no_password(url: str) -> None:
    pytest.importorskip("redis")
    from toolsearch.errors import SessionStoreError
    from toolsearch.search import RedisSessionStore

    store = RedisSessionStore(url.replace("localhost", "127.0.0.1").replace("6379", "1"))
    assert "s3cretpw" not in repr(store)
    with pytest.raises(SessionStoreError) as failure:
        store.session_ids()  # nothing listens on port 1
    assert "s3cretpw" not in str(failure.value)


def test_a_milvus_connection_shows_no_credentials(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("pymilvus")
    from toolsearch.errors import IndexUnavailableError
    from toolsearch.indexes.milvus.client import MilvusConnection, RetryPolicy

    class Refusing:
        def list_collections(self) -> None:
            raise ConnectionError("failed to connect to http://alice:s3cretpw@127.0.0.1:1")

    connection = MilvusConnection(
        "http://alice:s3cretpw@127.0.0.1:1",
        client=Refusing(),
        retry=RetryPolicy(attempts=2, sleep=lambda s: None),
    )
    assert "s3cretpw" not in repr(connection)
    with caplog.at_level(logging.DEBUG), pytest.raises(IndexUnavailableError) as failure:
        connection.call("list collections", lambda client: client.list_collections())
    assert "s3cretpw" not in str(failure.value)
    assert "s3cretpw" not in caplog.text
