"""Fixtures for the screens' tests: the venue site with passwords, signed-in clients, orders."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient
from psycopg import sql

from services.models import db
from services.storage import engine_for
from services.users import add_user
from tests.conftest import database_url_for
from tests.integration.api_fixtures import Site, build_site

PASSWORD = "correct horse battery"
"""Every test user's password."""

CHECK_NO_NOTE = (
    "ALTER TABLE public.orders ADD CONSTRAINT ck_cancelled_without_note "
    "CHECK (status <> 'cancelled' OR note IS NULL) NOT VALID"
)
"""A rule of the venue's own database: an order with a note may not be cancelled."""


def give_passwords(site: Site) -> None:
    """Let the four test users sign in with PASSWORD."""
    with site.app.app_context():
        for email, role, app_ref in (
            ("manager@venue.test", "manager", "venue/venue"),
            ("staff@venue.test", "staff", "venue/venue"),
            ("clerk@other.test", "clerk", "venue/other"),
            ("admin@venue.test", "admin", None),
        ):
            add_user(db.session, email, role, app_ref, password=PASSWORD)


def csrf_of(html: str) -> str:
    """The CSRF token a page carries."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', html) or re.search(
        r'"X-CSRFToken": "([^"]+)"', html
    )
    assert found is not None, "the page carries no CSRF token"
    return found.group(1)


def sign_in(client: FlaskClient, email: str) -> None:
    """Sign a test client in through the form."""
    page = client.get("/signin")
    answer = client.post(
        "/signin",
        data={"email": email, "password": PASSWORD, "csrf_token": csrf_of(page.text)},
    )
    assert answer.status_code == 302, answer.text


def add_order(site: Site, pickup_at: datetime, **values: Any) -> int:
    """An order straight into the venue's database (status placed unless given)."""
    return int(site.insert("orders", **{"status": "placed", "pickup_at": pickup_at, **values}))


@pytest.fixture(scope="module")
def screens_site(server_database_url: str, redis_url: str) -> Iterator[Site]:
    """The venue site for a module's tests, its users able to sign in (rows differ by key)."""
    names = [f"adm_test_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    control_url, venue_url = (database_url_for(server_database_url, n) for n in names)
    site = build_site(control_url, venue_url, redis_url)
    give_passwords(site)
    yield site
    with site.app.app_context():
        db.engine.dispose()
    for url in (control_url, venue_url):
        engine_for(url).dispose()
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        for name in names:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def signed_in(screens_site: Site) -> Callable[[str], FlaskClient]:
    """Factory: a fresh client signed in as one of the test users (`manager`, `clerk`, …)."""

    def make(user: str) -> FlaskClient:
        client = screens_site.app.test_client()
        sign_in(client, f"{user}@{'other' if user == 'clerk' else 'venue'}.test")
        return client

    return make


def forbid_cancel_with_note(site: Site) -> None:
    """Add the venue's own CHECK that refuses cancelling an order that has a note."""
    with site.store().engine.begin() as conn:
        conn.execute(sa.text(CHECK_NO_NOTE))
