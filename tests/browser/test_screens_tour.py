"""A scripted tour of every screen in Chromium, a row event
pushed to each live one while it is open. On every screen: no console error and no
Content-Security-Policy violation, axe-core finds no violation, nothing is wider than a
390 px phone (the board's columns excepted: they scroll sideways inside themselves), and an
app's screens carry one bar of them all."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import axe_playwright_python
import pytest
import redis
from playwright.sync_api import ConsoleMessage, Page, expect

from core.basics.actors import Actor
from services.events import Publisher
from services.models import App, db
from services.writes import write_by_person
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import PASSWORD, add_order, forbid_cancel_with_note, served

pytestmark = pytest.mark.browser

AXE = (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text()
"""axe-core itself (the copy the PyPI package `axe-playwright-python` ships)."""

CANCELLED = {
    "kind": "message",
    "table": "orders",
    "on": {"column": "status", "values": ["cancelled"]},
    "to": "note",
    "subject": "Order {{ row.id }} cancelled",
    "body": "Your order {{ row.id }} was cancelled.",
}
OFFERED = {
    "name": "ticket_offered",
    "table": "tickets",
    "on": {"column": "status", "values": ["offered"]},
    "webhook": "kitchen",
}
BAR = ["Board", "Wall", "Pending", "Set aside", "Clock's log", "Outbox", "Deliveries", "Webhooks"]
"""The app's bar, in order, on every screen of it (an admin sees all of them)."""

# Counts the pushes a screen's socket handed to htmx (an init script: no CSP applies).
COUNT_PUSHES = """
window.adminiumPushes = 0;
document.addEventListener("htmx:wsAfterMessage", () => { window.adminiumPushes += 1; });
"""


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site with an outbox and an automation, served by a real threaded server."""
    with screens_site.app.app_context():
        app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
        app.manifest = {
            **app.manifest,
            "outbox": {"settings": {"table": "settings"}, "producers": [CANCELLED]},
            "automations": [OFFERED],
        }
        db.session.commit()
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


def watch(page: Page) -> list[str]:
    """What the browser refused or failed on: console errors (a CSP violation is one),
    warnings from htmx (`htmx:oobErrorNoTarget` is logged so) and uncaught page errors."""
    found: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" or "htmx:" in message.text:
            found.append(f"{message.type}: {message.text} ({message.location['url']})")

    page.on("console", on_console)
    page.on("pageerror", lambda error: found.append(f"page error: {error}"))
    page.add_init_script(COUNT_PUSHES)
    return found


def write(site: Site, redis_url: str, table: str, key: Any, **change: Any) -> None:
    """A manager's write of a row; its events go out to every open screen."""
    client = redis.Redis.from_url(redis_url)
    try:
        with site.app.app_context():
            write_by_person(
                site.store(),
                table,
                key,
                actor=Actor.person("manager@venue.test", frozenset({"manager", "staff"})),
                clock=site.clock,
                publisher=Publisher(client),
                **change,
            )
    finally:
        client.close()


def push_a_change(site: Site, redis_url: str, key: int, note: str) -> None:
    """A person changes an order's note: its row event goes out to every open screen."""
    write(site, redis_url, "orders", key, values={"note": note})


def wait_pushes(page: Page, count: int) -> None:
    """Wait until the screen's socket has handed htmx `count` pushes in all (the rig's
    deadline, not a speed), and until what they swapped in has settled."""
    page.wait_for_function("(count) => window.adminiumPushes >= count", arg=count)
    settled(page)


def settled(page: Page) -> None:
    """Wait until no htmx request, swap or settling is under way in the page."""
    expect(page.locator(".htmx-request, .htmx-swapping, .htmx-settling")).to_have_count(0)


def axe_violations(page: Page) -> list[str]:
    """axe-core's violations of the page as it stands: rule, and the first offender."""
    page.evaluate(AXE)
    result: dict[str, Any] = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']}: {v['help']} ({v['nodes'][0]['target']}, {v['nodes'][0]['html'][:120]})"
        for v in result["violations"]
    ]


def too_wide(page: Page) -> list[str]:
    """At the page's width: the page scrolls sideways, or which elements reach past the
    window (outside the board's own sideways-scrolling columns)."""
    return list(
        page.evaluate(
            """() => {
              const width = document.documentElement.clientWidth;
              const found = [];
              if (document.documentElement.scrollWidth > width) {
                found.push(`page ${document.documentElement.scrollWidth}px wide`);
              }
              for (const el of document.querySelectorAll("main *, header *")) {
                if (el.closest(".columns") || el.closest(".scroll-x")) { continue; }
                const box = el.getBoundingClientRect();
                if (box.width && box.right > width + 1) {
                  const name = `${el.tagName.toLowerCase()}.${el.className}`;
                  found.push(`${name} right ${Math.round(box.right)}`);
                }
              }
              return found.slice(0, 5);
            }"""
        )
    )


SHOTS = {
    "/connections/venue/apps/venue/outbox": "outbox",
    "/connections/venue/deliveries": "deliveries",
    "/status": "status_details",
}
"""The screens kept as screenshots (at 1280 px and, `_phone`, at 390 px)."""


def test_every_screen_is_quiet_accessible_fits_a_phone_and_has_the_bar(
    page: Page,
    base: str,
    screens_site: Site,
    redis_url: str,
    screenshot: Callable[[str], Path],
) -> None:
    screens_site.clock.now = at("2026-07-08 20:04")
    key = add_order(screens_site, at("2026-07-09 11:30"), note="2 x falafel wrap")
    # An email queued (a cancelled order mails the address in its note) and a delivery
    # queued (an offered ticket posts to the kitchen): the Outbox and Deliveries list one.
    mailed = add_order(screens_site, at("2026-07-09 12:30"), note="a.long.address@example.com")
    write(screens_site, redis_url, "orders", mailed, move_to="cancelled")
    ticket = screens_site.insert(
        "tickets",
        event_id=screens_site.insert("events", doors_at=at("2026-07-10 18:00")),
        status="valid",
    )
    write(
        screens_site,
        redis_url,
        "tickets",
        ticket,
        move_to="offered",
        values={"pending_email": "friend@example.com"},
    )
    forbid_cancel_with_note(screens_site)
    aside = add_order(screens_site, at("2026-07-08 11:30"), note="allergy: nuts")
    from tests.browser.test_screens import sweep

    sweep(screens_site, redis_url, "2026-07-08 20:01")
    refused = watch(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{base}/signin")
    assert axe_violations(page) == [], "/signin"
    page.set_viewport_size({"width": 390, "height": 800})
    assert too_wide(page) == [], "/signin"
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_label("Email").fill("admin@venue.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("body[data-live=open]")).to_have_count(1)
    found: dict[str, list[str]] = {}
    if refused:
        found["sign in"] = list(refused)
        refused.clear()

    venue = "/connections/venue"
    # (path, pushed a row change, in the app's bar); the Outbox is pushed only its mail.
    screens = [
        ("/connections", True, False),
        ("/status", False, False),
        ("/apps/venue/venue/orders", True, True),
        ("/apps/venue/venue/orders/wall", True, False),
        (f"/apps/venue/venue/orders/{key}", True, True),
        (f"{venue}/pending", True, True),
        (f"{venue}/set-aside", True, True),
        (f"{venue}/clock", False, True),
        (f"{venue}/apps/venue/outbox", False, True),
        (f"{venue}/apps/venue/outbox/1", False, True),
        (f"{venue}/deliveries", False, True),
        (f"{venue}/webhooks", False, True),
        (f"{venue}/receiver", False, True),
    ]
    for number, (path, pushed, bar) in enumerate(screens):
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(f"{base}{path}")
        problems: list[str] = []
        if pushed:
            expect(page.locator("body[data-live=open]")).to_have_count(1)
            pushes = page.evaluate("window.adminiumPushes")
            push_a_change(screens_site, redis_url, key, f"note {number}")
            push_a_change(screens_site, redis_url, aside, f"allergy {number}")
            wait_pushes(page, pushes + 1)
        if path.endswith("/set-aside"):
            # A keyboard Save (once six CSP errors: htmx settled inline styles).
            page.locator(f"#aside-orders-{aside}-value").fill("at the door")
            page.locator(f"#aside-orders-{aside}-save").focus()
            page.keyboard.press("Enter")
            expect(page.locator(f"#aside-orders-{aside} .said")).to_contain_text("Saved")
            settled(page)
        if bar:
            names = page.locator("nav.app-bar a").all_inner_texts()
            if [n.strip() for n in names] != BAR:
                problems.append(f"bar: {names}")
        problems += axe_violations(page)
        if path in SHOTS:
            screenshot(SHOTS[path])
        page.set_viewport_size({"width": 390, "height": 800})
        problems += too_wide(page)
        if path in SHOTS:
            screenshot(f"{SHOTS[path]}_phone")
        problems += refused
        refused.clear()
        if problems:
            found[path] = problems
    assert found == {}, json.dumps(found, indent=1)
