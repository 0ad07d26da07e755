"""The screens in German, French, Portuguese and Spanish, in Chromium.

Signed in as a user whose locale is German, every screen reads German (no English string
of the catalogue is left on it), with German dates, and a push reads German too; a
Portuguese connection's wall reads Portuguese to a user with no setting of their own;
axe-core finds no violation in each language; at 390 px no word overflows its button,
badge or card (German runs long). Screenshots of the board, the wall and the set-aside list
in German and Portuguese (docs/screenshots, `make screenshots`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from playwright.sync_api import Browser, Page, expect

from services import connections, users
from services.models import db
from tests.browser.test_screens import sweep
from tests.browser.test_screens_tour import (
    axe_violations,
    base,  # noqa: F401 (the module's served site, with an outbox and an automation)
    push_a_change,
    too_wide,
    wait_pushes,
    watch,
)
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import PASSWORD, add_order, forbid_cancel_with_note

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
VENUE = "/connections/venue"
SCREENS = [
    "/connections",
    "/apps/venue/venue/orders",
    "/apps/venue/venue/orders/wall",
    "ROW",
    f"{VENUE}/pending",
    f"{VENUE}/set-aside",
    f"{VENUE}/clock",
    f"{VENUE}/apps/venue/outbox",
    f"{VENUE}/deliveries",
    f"{VENUE}/webhooks",
]
"""Every screen of the tour (ROW: the order's own page)."""
PUSHED = {SCREENS[i] for i in range(6)}
"""Those an order's change is pushed to (the outbox hears its mail alone)."""
SHOTS = {
    "/apps/venue/venue/orders": "board",
    "/apps/venue/venue/orders/wall": "wall",
    f"{VENUE}/set-aside": "set_aside",
}
"""The screens kept as screenshots in each language (`board_de.png`, `wall_pt_PT.png`, …)."""
SAME = {"Webhook", "Webhooks", "Status", "App", "Name", "URL", "Menu", "Tables", "Signature"}
"""English words some catalogues keep as they are (a German Webhook is a Webhook)."""


def english_left(text: str, locale: str) -> list[str]:
    """The catalogue's English strings (without placeholders or markup) still on a screen
    whose language is `locale`: each one its translation differs from."""
    path = ROOT / "translations" / locale / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as file:
        catalog = read_po(file, locale=locale)
    found = []
    for message in catalog:
        english = message.id if isinstance(message.id, str) else ""
        if not english or "%" in english or "<" in english or len(english.strip()) < 4:
            continue
        if english == message.string or english.strip() in SAME:
            continue
        if re.search(rf"(?<![\w-]){re.escape(english.strip())}(?![\w-])", text):
            found.append(english.strip())
    return found


def overflowing(page: Page) -> list[str]:
    """Buttons, badges, links of the bar and cards whose words run past their own box."""
    return list(
        page.evaluate(
            """() => {
              const found = [];
              const picked = "button, .badge, nav a, .card, .toast, label, th";
              for (const el of document.querySelectorAll(picked)) {
                if (!el.offsetParent) { continue; }
                if (el.scrollWidth > el.clientWidth + 1) {
                  const name = `${el.tagName.toLowerCase()}.${el.className}`;
                  found.push(`${name}: ${el.innerText.slice(0, 40)}`
                    + ` (${el.scrollWidth} > ${el.clientWidth})`);
                }
              }
              return found.slice(0, 8);
            }"""
        )
    )


def tour(
    page: Page,
    base_url: str,
    site: Site,
    redis_url: str,
    locale: str,
    shots: Path,
    email: str = "admin@venue.test",
) -> dict[str, list[str]]:
    """Sign in, open every screen, push a change to each live one; what was wrong."""
    key = add_order(site, at("2026-07-09 11:30"), note="2 x falafel wrap")
    refused = watch(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{base_url}/signin")
    page.locator("input[name=email]").fill(email)
    page.locator("input[name=password]").fill(PASSWORD)
    page.locator("form.sign-in button[type=submit]").click()
    expect(page.locator("body[data-live=open]")).to_have_count(1)
    tag = locale.replace("_", "-")
    found: dict[str, list[str]] = {}
    for number, path in enumerate(SCREENS):
        target = f"/apps/venue/venue/orders/{key}" if path == "ROW" else path
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(f"{base_url}{target}")
        problems: list[str] = []
        if page.locator("html").get_attribute("lang") != tag:
            problems.append(f"lang {page.locator('html').get_attribute('lang')}")
        if path in PUSHED:
            expect(page.locator("body[data-live=open]")).to_have_count(1)
            pushes = page.evaluate("window.adminiumPushes")
            push_a_change(site, redis_url, key, f"note {locale} {number}")
            wait_pushes(page, pushes + 1)
            page.wait_for_timeout(300)  # the swaps it carried settle
        problems += english_left(page.locator("body").inner_text(), locale)
        problems += axe_violations(page)
        if path in SHOTS and locale in ("de", "pt_PT"):
            page.screenshot(path=str(shots / f"{SHOTS[path]}_{locale}.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 800})
        problems += too_wide(page) + overflowing(page)
        problems += refused
        refused.clear()
        if problems:
            found[target] = problems
    return found


def set_locales(site: Site, user: str | None, connection: str | None) -> None:
    with site.app.app_context():
        users.set_locale(db.session, "admin@venue.test", user)
        connections.set_locale(db.session, "venue", connection)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the screenshots go: ADMINIUM_SCREENSHOTS (`make screenshots`), else a temp folder."""
    folder = Path(os.environ.get("ADMINIUM_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def aside_order(screens_site: Site, redis_url: str) -> int:
    """An order the sweep set aside (the venue refuses cancelling one with a note)."""
    screens_site.clock.now = at("2026-07-08 20:04")
    forbid_cancel_with_note(screens_site)
    key = add_order(screens_site, at("2026-07-08 11:30"), note="allergy: nuts")
    sweep(screens_site, redis_url, "2026-07-08 20:01")
    return key


@pytest.mark.parametrize("locale", ["de", "pt_PT", "fr", "es"])
def test_every_screen_in_the_users_language(
    browser: Browser,
    base: str,  # noqa: F811
    screens_site: Site,
    redis_url: str,
    aside_order: int,
    shots: Path,
    locale: str,
) -> None:
    set_locales(screens_site, locale, None)
    context = browser.new_context(locale="en-GB")  # the browser asks for English: the user wins
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        found = tour(page, base, screens_site, redis_url, locale, shots)
    finally:
        context.close()
        set_locales(screens_site, None, None)
    assert found == {}, json.dumps(found, indent=1, ensure_ascii=False)


def test_german_dates_and_a_german_toast(
    browser: Browser,
    base: str,  # noqa: F811
    screens_site: Site,
    redis_url: str,
) -> None:
    set_locales(screens_site, "de", None)
    # Friday 10 July 2026 10:00 in London; a 12:30 pickup still placed is cancelled at
    # Friday's closing, 21:00 BST: 11 hours on.
    screens_site.clock.now = at("2026-07-10 09:00")
    key = add_order(screens_site, at("2026-07-10 11:30"), note="Spätzle")
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{base}/signin")
        page.locator("input[name=email]").fill("admin@venue.test")
        page.locator("input[name=password]").fill(PASSWORD)
        page.locator("form.sign-in button[type=submit]").click()
        page.goto(f"{base}/apps/venue/venue/orders/{key}")
        expect(page.locator(".waits time")).to_have_text("Fr., 10. Juli 2026, 21:00")
        expect(page.locator(".waits .relative")).to_have_text("in 11 Std.")
        page.locator(f"#detail-orders-{key}-move-confirmed").click()
        toast = page.locator("#toasts .toast-words").last
        expect(toast).to_have_text(f"Orders #{key} von Ihnen zu Confirmed gewechselt.")
        expect(page.locator("#toasts .toast-undo").last).to_have_text("Zurück zu Placed")
    finally:
        context.close()
        set_locales(screens_site, None, None)


def test_a_portuguese_connections_wall_to_a_user_with_no_setting(
    browser: Browser,
    base: str,  # noqa: F811
    screens_site: Site,
    redis_url: str,
) -> None:
    set_locales(screens_site, None, "pt_PT")
    context = browser.new_context(locale="de-DE")  # the browser's German loses to the venue's
    page = context.new_page()
    try:
        page.goto(f"{base}/signin")
        page.locator("input[name=email]").fill("admin@venue.test")
        page.locator("input[name=password]").fill(PASSWORD)
        page.locator("form.sign-in button[type=submit]").click()
        page.goto(f"{base}/apps/venue/venue/orders/wall")
        expect(page.locator("html")).to_have_attribute("lang", "pt-PT")
        text = page.locator("body").inner_text()
        assert english_left(text, "pt_PT") == []
        assert "Hora local" in text
        # Off the connection's screens the browser's own language speaks again.
        page.goto(f"{base}/connections")
        expect(page.locator("html")).to_have_attribute("lang", "de")
    finally:
        context.close()
        set_locales(screens_site, None, None)
