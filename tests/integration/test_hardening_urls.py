"""The one masking function shows every kind of URL the product holds without its secrets."""

from __future__ import annotations

import pytest

from services.urls import hide_password

CASES = {
    "postgres_url": ("postgresql://ada:s3cret@db:5432/app", "postgresql://ada:***@db:5432/app"),
    "postgres_query_password": (
        "postgresql://ada@db/app?password=s3cret",
        "postgresql://ada:***@db/app",
    ),
    "postgres_conninfo": (
        "host=db user=ada password=s3cret dbname=app",
        "postgresql://ada:***@db/app",
    ),
    "postgres_ssl_passphrase_left_out": (
        "postgresql://ada@db/app?sslpassword=s3cret&sslmode=require",
        "postgresql://ada@db/app?sslmode=require",
    ),
    "redis_userinfo": ("redis://:s3cret@cache:6379/0", "redis://:***@cache:6379/0"),
    "redis_user_and_password": ("rediss://ada:s3cret@cache/0", "rediss://ada:***@cache/0"),
    "redis_query_password": (
        "redis://cache:6379/0?password=s3cret&socket_timeout=3",
        "redis://cache:6379/0?password=***&socket_timeout=3",
    ),
    "redis_socket_query_password": (
        "unix:///run/redis.sock?db=0&password=s3cret",
        "unix:///run/redis.sock?db=0&password=***",
    ),
    "redis_without_password": ("redis://cache:6379/0", "redis://cache:6379/0"),
    "redis_socket": ("unix:///tmp/r/redis.socket", "unix:///tmp/r/redis.socket"),
    "webhook_every_query_value": (
        "https://hooks.example/in?client_secret=s3cret&auth=s3cret&code=s3cret"
        "&X-Amz-Signature=s3cret&X-Amz-Credential=s3cret%2F20260101&screen=2",
        "https://hooks.example/in?client_secret=***&auth=***&code=***"
        "&X-Amz-Signature=***&X-Amz-Credential=***&screen=***",
    ),
    "webhook_user_and_password": (
        "https://kitchen:s3cret@hooks.example/in",
        "https://kitchen:***@hooks.example/in",
    ),
    "webhook_lone_user_name": ("https://s3cret@hooks.example/in", "https://***@hooks.example/in"),
    "webhook_plain": ("http://hooks.example:8080/in", "http://hooks.example:8080/in"),
}


@pytest.mark.parametrize(("url", "shown"), CASES.values(), ids=CASES.keys())
def test_hide_password_shows_no_secret(url: str, shown: str) -> None:
    assert hide_password(url) == shown
    assert "s3cret" not in hide_password(url)


@pytest.mark.parametrize(
    "url", ["redis://:s3cret@[::1", "host='db password=s3cret", "postgresql://a:s3cret@h:x/db"]
)
def test_an_unreadable_url_is_not_echoed(url: str) -> None:
    assert "s3cret" not in hide_password(url)
