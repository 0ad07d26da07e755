"""The web says it is up and which database and Redis it uses, never a password."""

from __future__ import annotations

from web import create_app
from web.status import safe_url


def test_status_names_both_servers(database_url: str, redis_url: str) -> None:
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "REDIS_URL": redis_url})
    page = app.test_client().get("/status").get_data(as_text=True)
    assert "Adminium is up" in page
    assert "PostgreSQL 1" in page
    assert "Redis " in page and "does not answer" not in page


def test_safe_url_hides_the_password() -> None:
    assert safe_url("postgresql://ada:s3cret@db.example:5432/app") == (
        "postgresql://ada:***@db.example:5432/app"
    )
    assert safe_url("redis://:hunter2@cache:6379/0") == "redis://:***@cache:6379/0"
    assert safe_url("unix:///tmp/r/redis.socket") == "unix:///tmp/r/redis.socket"
