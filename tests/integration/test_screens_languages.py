"""Which language the screens speak: the user's own, else the connection's, else the
browser's Accept-Language among the catalogues, else English; `<html lang>` says which.
Dates and spans in the locale, on the venue's clock (London here, whatever the language).

The site's clock reads Friday 10 July 2026 09:00 UTC, 10:00 in London (BST, UTC+1).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
import sqlalchemy as sa
from click.testing import CliRunner
from flask.testing import FlaskClient
from simple_websocket import Client

from adminium.cli import main
from services import connections, users
from services.control_version import read_version
from services.events import Publisher
from services.models import User, db
from services.sweeps import sweep
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, csrf_of, forbid_cancel_with_note
from tests.integration.test_screens_live import ASIDE_SOCKET, cookie_of, receive_until

BOARD = "/apps/venue/venue/orders"


def lang(html: str) -> str:
    found = re.search(r'<html lang="([^"]+)">', html)
    assert found is not None
    return found.group(1)


def set_locales(site: Site, user: str | None, connection: str | None) -> None:
    """The manager's own locale and the venue connection's (None: none)."""
    with site.app.app_context():
        users.set_locale(db.session, "manager@venue.test", user)
        connections.set_locale(db.session, "venue", connection)


@pytest.fixture(autouse=True)
def no_locales(screens_site: Site) -> None:
    set_locales(screens_site, None, None)


def test_english_without_any_choice(screens_site: Site) -> None:
    page = screens_site.app.test_client().get("/signin").text
    assert lang(page) == "en"
    assert "<h1>Sign in</h1>" in page


@pytest.mark.parametrize(
    ("accept", "tag", "heading"),
    [
        ("de-DE,de;q=0.9,en;q=0.5", "de", "Anmelden"),
        ("fr-FR,fr;q=0.8", "fr", "Se connecter"),
        ("pt-PT,pt;q=0.9", "pt-PT", "Iniciar sessão"),
        ("pt-BR", "pt-PT", "Iniciar sessão"),
        ("es-ES", "es", "Iniciar sesión"),
        ("ja-JP", "en", "Sign in"),
    ],
)
def test_the_browsers_language_among_the_catalogues(
    screens_site: Site, accept: str, tag: str, heading: str
) -> None:
    page = screens_site.app.test_client().get("/signin", headers={"Accept-Language": accept})
    assert lang(page.text) == tag
    assert f"<h1>{heading}</h1>" in page.text


def test_the_users_choice_then_the_connections_then_the_browsers(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("manager")
    french = {"Accept-Language": "fr"}
    assert lang(client.get("/connections/venue/pending", headers=french).text) == "fr"
    set_locales(screens_site, None, "pt_PT")
    page = client.get("/connections/venue/pending", headers=french).text
    assert lang(page) == "pt-PT"
    assert "Mudanças agendadas pendentes" in page
    set_locales(screens_site, "de", "pt_PT")
    page = client.get("/connections/venue/pending", headers=french).text
    assert lang(page) == "de"
    assert "<h1>Anstehende Zeitwechsel · venue</h1>" in page
    # Off a connection's screens (the sign-in-free status page) the user's own still speaks.
    assert lang(client.get("/connections").text) == "de"


def test_the_connection_page_says_its_language(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    page = signed_in("manager").get("/connections").text
    assert '<dd class="connection-locale">each browser\'s</dd>' in page
    set_locales(screens_site, None, "pt_PT")
    page = signed_in("manager").get("/connections").text
    assert '<dd class="connection-locale">Português (Portugal)</dd>' in page


def test_the_menus_select_changes_it_from_the_next_page_on(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("manager")
    page = client.get("/connections/venue/pending").text
    assert '<option value="" selected>As the connection or browser</option>' in page
    with screens_site.app.app_context():
        before = read_version(db.session.connection())
    answer = client.post(
        "/language",
        data={"locale": "es", "next": "/connections/venue/pending", "csrf_token": csrf_of(page)},
    )
    assert answer.status_code == 302
    assert answer.headers["Location"] == "/connections/venue/pending"
    page = client.get("/connections/venue/pending").text
    assert lang(page) == "es"
    assert '<option value="es" lang="es" selected>Español</option>' in page
    with screens_site.app.app_context():
        # The control plane's version moved: every web process's cache reads users again.
        assert read_version(db.session.connection()) > before
        user = db.session.scalar(sa.select(User).where(User.email == "manager@venue.test"))
        assert user is not None and user.locale == "es"
    refused = client.post(
        "/language", data={"locale": "klingon", "next": "/", "csrf_token": csrf_of(page)}
    )
    assert refused.status_code == 400
    assert lang(client.get("/connections/venue/pending").text) == "es"


def test_a_german_row_page_with_german_dates_on_londons_clock(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    set_locales(screens_site, "de", None)
    # A 12:30 BST pickup still placed is cancelled at Friday's closing, 21:00 BST (20:00
    # UTC): 11 hours after the clock's 10:00 BST.
    key = add_order(screens_site, at("2026-07-10 11:30"), note="deutsch")
    page = signed_in("manager").get(f"{BOARD}/{key}").text
    assert lang(page) == "de"
    assert "Zeiten auf der Uhr des Betriebs: <strong>Europe/London</strong>" in page
    assert "<h2>Ihnen offene Wechsel</h2>" in page
    assert ">Fr., 10. Juli 2026, 21:00</time>" in page
    assert '(<span class="relative">in 11 Std.</span>)' in page
    assert "Abmelden" in page and "Sign out" not in page


def test_a_german_toast_after_a_move(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    set_locales(screens_site, "de", None)
    key = add_order(screens_site, at("2026-07-10 11:30"))
    client = signed_in("manager")
    page = client.get(f"{BOARD}/{key}").text
    answer = client.post(
        f"/apps/venue/venue/orders/{key}/move",
        data={"to": "confirmed", "seen": "placed", "csrf_token": csrf_of(page)},
        headers={"X-CSRFToken": csrf_of(page), "HX-Request": "true"},
    )
    assert answer.status_code == 200, answer.text
    assert f"Orders #{key} von Ihnen zu Confirmed gewechselt." in answer.text
    assert ">Zurück zu Placed</button>" in answer.text


def test_the_console_sets_a_users_and_a_connections_language(
    screens_site: Site, tmp_path: Path
) -> None:
    env = {"DATABASE_URL": screens_site.app.config["DATABASE_URL"], "REDIS_URL": ""}
    run = CliRunner().invoke
    added = run(
        main, ["user", "add", "cook@venue.test", "--role", "admin", "--locale", "de"], env=env
    )
    assert added.exit_code == 0, added.output
    changed = run(main, ["user", "locale", "cook@venue.test", "pt-PT"], env=env)
    assert changed.output == "user cook@venue.test: screens in pt_PT\n"
    refused = run(main, ["connection", "locale", "venue", "xx"], env=env)
    assert refused.exit_code != 0
    assert "'xx' is no language the screens speak: choose one of en, de, fr, pt_PT, es" in (
        refused.output
    )
    said = run(main, ["connection", "locale", "venue", "fr"], env=env)
    assert said.output == "connection venue: screens in fr\n"
    with screens_site.app.app_context():
        cook = db.session.scalar(sa.select(User).where(User.email == "cook@venue.test"))
        assert cook is not None and cook.locale == "pt_PT"
    run(main, ["connection", "locale", "venue"], env=env)


def test_a_live_push_reads_german_to_a_german_screen(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], base_url: str, redis_url: str
) -> None:
    # The venue refuses cancelling an order with a note. Pickup Wed 8 July 12:30 BST: due
    # at closing, 21:00 BST = 20:00 UTC; the 20:01 UTC sweep is refused and sets it aside.
    set_locales(screens_site, "de", None)
    forbid_cancel_with_note(screens_site)
    key = add_order(screens_site, at("2026-07-08 11:30"), note="Nüsse")
    cookie = {"Cookie": cookie_of(signed_in("manager"))}
    aside = Client.connect(f"ws://{base_url}{ASIDE_SOCKET}", headers=cookie)
    client = redis.Redis.from_url(redis_url)
    try:
        started = time.monotonic()
        with screens_site.app.app_context():
            sweep(db.session, "venue", now=at("2026-07-08 20:01"), publisher=Publisher(client))
        listed = receive_until(aside, f'id="aside-orders-{key}"', started)
    finally:
        aside.close()
        client.close()
        with screens_site.store().engine.begin() as conn:
            conn.execute(
                sa.text("ALTER TABLE public.orders DROP CONSTRAINT ck_cancelled_without_note")
            )
    assert (
        '<span class="refusal-words">Note verstößt gegen eine Regel der Tabelle. Ändern Sie'
        " Note und versuchen Sie es erneut.</span>" in listed
    )
    assert "Zurückgestellt: erneuter Versuch im Durchlauf der nächsten Minute." in listed
    assert "<h3>Von Hand wechseln</h3>" in listed
    assert "Sign out" not in listed and "Move it by hand" not in listed


def test_the_redis_banner_is_said_in_each_screens_language(screens_site: Site) -> None:
    live_hub = screens_site.app.extensions["adminium.live"]
    assert "<strong>Redis antwortet nicht:</strong>" in live_hub.banner(down=True, locale="de")
    assert "<strong>O Redis não responde:</strong>" in live_hub.banner(down=True, locale="pt_PT")
    assert "<strong>Redis does not answer:</strong>" in live_hub.banner(down=True)


def test_a_german_board_says_its_timers_windows_and_rests_in_german(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    # h35a's words (tests/integration/test_board_today.py in English), in German: Fri 10 July
    # 2026 18:00 UTC = 19:00 BST; the venue's day runs Thu 23:00 UTC to Fri 23:00 UTC.
    set_locales(screens_site, "de", None)
    monkeypatch.setattr(screens_site.clock, "now", at("2026-07-10 18:00"))
    late = add_order(screens_site, at("2026-07-10 17:40"))  # 20 min past its time: late
    soon = add_order(screens_site, at("2026-07-10 18:20"))  # in 20 min
    add_order(screens_site, at("2026-07-10 17:00"), status="cancelled")  # today
    add_order(screens_site, at("2026-07-09 22:30"), status="cancelled")  # Thu 23:30 BST
    add_order(screens_site, at("2026-07-08 12:00"), status="cancelled")  # Wed
    page = signed_in("manager").get(BOARD).text
    assert lang(page) == "de"
    assert '<span class="window">heute</span>' in page
    rest = re.search(r'<p class="rest" id="rest-orders-cancelled">(.*?)</p>', page, re.S)
    assert rest is not None
    assert rest[1].startswith("2 an anderen Tagen · <a href=")
    assert rest[1].endswith(">durchsuchen</a>")
    card = re.search(
        rf'id="row-orders-{late}".*?<span class="timer" role="timer">([^<]*)<', page, re.S
    )
    assert card is not None and card[1] == "20 Min. zu spät"
    card = re.search(
        rf'id="row-orders-{soon}".*?<span class="timer" role="timer">([^<]*)<', page, re.S
    )
    assert card is not None and card[1] == "in 20 Min."
    # The words the script ticks and pages with, as the catalogue says them.
    assert 'data-word-late="%(span)s zu spät"' in page
    assert 'data-word-due-now="jetzt fällig"' in page
    assert 'data-word-paged="+%(count)s weitere · Seite %(page)s von %(pages)s"' in page
    assert 'data-word-offline="offline · zuletzt aktualisiert %(time)s"' in page
    assert "on other days" not in page and "search them" not in page
    wall = signed_in("manager").get("/apps/venue/venue/orders/wall").text
    assert 'data-word-on="Ton an" data-word-off="Ton aus"' in wall
    assert ">Ton an</button>" in wall


def test_a_refused_bump_reads_german_to_a_german_connection(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    set_locales(screens_site, None, "de")
    gone = add_order(screens_site, at("2026-07-10 11:50"), status="cancelled")
    client = signed_in("staff")
    page = client.get(BOARD).text
    assert 'data-word-unanswered="Nicht weitergegeben: Der Server hat nicht geantwortet."' in page
    answer = client.post(
        f"{BOARD}/{gone}/bump",
        data={"seen": "cancelled"},
        headers={"HX-Request": "true", "X-CSRFToken": csrf_of(page)},
    )
    assert answer.status_code == 409
    assert (
        f"Nicht weitergegeben: Orders #{gone}: Aus Cancelled dürfen Sie nicht weiterschalten."
    ) in answer.text


def test_a_previews_horizon_in_german_on_the_venues_clock() -> None:
    # 192 hours past Fri 23 Oct 2026 20:30 UTC, over the clocks going back on Sun 25 Oct in
    # London: Sat 31 Oct 20:30 GMT (tests/integration/test_preview_screens.py in English);
    # 30 hours: Sun 25 Oct 02:30 UTC, 02:30 GMT (an hour after the clocks went back).
    from datetime import timedelta
    from zoneinfo import ZoneInfo

    from babel.support import Translations

    from core.basics.speech import Speech
    from core.time.words import horizon_words
    from web.language import compile_catalogues

    german = Speech("de", Translations.load(str(compile_catalogues()), ["de"]))
    london = ZoneInfo("Europe/London")
    now = at("2026-10-23 20:30")
    assert horizon_words(now, timedelta(hours=192), london) == ("read to Sat 31 Oct 20:30, 8 days")
    assert horizon_words(now, timedelta(hours=192), london, german) == (
        "gelesen bis Sa., 31. Okt., 20:30, 8 Tage"
    )
    assert horizon_words(now, timedelta(hours=30), london, german) == (
        "gelesen bis So., 25. Okt., 02:30, 30 Stunden"
    )
