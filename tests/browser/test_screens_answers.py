"""In Chromium: every set-aside fix answers
where the person acted and with a toast (Undo where the table lists the undo); a move the
clock would refuse again says so before it is made; the value box follows the chosen field;
a change that changes nothing is refused with a sentence and writes nothing; "Move to" on
several rows offers only the moves each can make; a refusal answers with its own status and
is swapped in; the sign-in page names the demo's account while it signs in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from playwright.sync_api import Dialog, Page, Route, expect

from services.demo_account import DEMO_EMAIL, DEMO_PASSWORD, forget_demo_check
from services.models import App, db
from services.users import add_user
from tests.browser.test_screens import LIVE_MS, sign_in, sweep, wait_live
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import NEEDS_NOTE, add_order, served

pytestmark = pytest.mark.browser

RULE_2 = {"from": "confirmed", "to": "cancelled", "at": {"column": "pickup_at"}}
"""A second timed rule for the module: a confirmed order is cancelled at its pickup time."""


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site, its orders with a second timed rule, served by a real threaded server."""
    with screens_site.app.app_context():
        app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
        manifest = dict(app.manifest)
        orders = dict(manifest["tables"]["orders"])
        states = dict(orders["states"])
        states["timed"] = [*states["timed"], RULE_2]
        orders["states"] = states
        manifest["tables"] = {**manifest["tables"], "orders": orders}
        app.manifest = manifest
        db.session.commit()
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


NO_NOTE_RULE = "ALTER TABLE public.orders DROP CONSTRAINT IF EXISTS cancelled_needs_note"
"""Takes the venue's rule (NEEDS_NOTE) away, if it is there."""


def audit_count(site: Site) -> int:
    return len(site.audit())


def test_set_aside_fixes_answer_warn_and_offer_only_what_can_be_done(
    page: Page, base: str, screens_site: Site, redis_url: str, screenshot: Callable[[str], Path]
) -> None:
    # The venue wants a note on a cancelled order. Three orders without one, picked up Wed
    # 8 July 12:30 BST = 11:30 UTC: two placed (rule 1 cancels them at closing, 21:00 BST =
    # 20:00 UTC) and one confirmed (rule 2 cancels it at its pickup, 11:30 UTC). The sweep at
    # 20:01 UTC is refused for all three; the web's clock reads 20:04 UTC.
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text(NEEDS_NOTE))
    first, second = (add_order(screens_site, at("2026-07-08 11:30")) for _ in range(2))
    confirmed = add_order(screens_site, at("2026-07-08 11:30"), status="confirmed")
    sweep(screens_site, redis_url, "2026-07-08 20:01")
    screens_site.clock.now = at("2026-07-08 20:04")
    page.set_viewport_size({"width": 1280, "height": 1000})
    sign_in(page, base, "staff@venue.test", "/connections/venue/set-aside")
    wait_live(page)
    item = page.locator(f"#aside-orders-{first}")
    expect(item).to_contain_text("must be filled when cancelled")

    # The value box follows the chosen field: a time on the venue's clock, then text.
    field, value = (
        page.locator(f"#aside-orders-{first}-field"),
        page.locator(f"#aside-orders-{first}-value"),
    )
    # Note first (the refused field): text of at most 40 characters, empty now. Channel: one
    # of its values offered, its value now. A new moment's own box takes a time.
    expect(value).to_have_attribute("maxlength", "40")
    field.select_option(label="Channel")
    expect(value).to_have_value("web")
    expect(value).not_to_have_attribute("maxlength", "40")
    choices = page.locator(f"#{value.get_attribute('list')} option")
    expect(choices).to_have_count(2)
    field.select_option(label="Note")
    expect(value).to_have_value("")
    expect(value).to_have_attribute("maxlength", "40")
    assert value.get_attribute("list") is None
    expect(page.locator(f"#aside-orders-{first}-moment")).to_have_attribute(
        "type", "datetime-local"
    )

    # A change that changes nothing is refused with a sentence, and nothing written.
    written = audit_count(screens_site)
    page.locator(f"#aside-orders-{first}-save").click()
    expect(item.locator(".said")).to_have_text(
        f"Not saved: Note of Orders #{first} is empty already, so nothing would change."
    )
    assert audit_count(screens_site) == written

    # A move the clock would refuse again says so before it is made: Confirmed is due
    # at once under rule 2 (at its pickup, 12:30 BST), which cancels it, which was refused.
    warning = (
        "Moved to Confirmed, it is due at once under rule 2 (Confirmed → Cancelled at"
        " Wed 08 Jul 2026 12:30): the next minute's sweep moves it to Cancelled, which was"
        " refused for this row, and sets it aside again. Fix what refused it first."
    )
    expect(item.locator(".again-warning")).to_have_text(warning)
    asked: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    page.locator(f"#aside-orders-{first}-move-confirmed").click()
    expect(item).to_be_visible()
    assert asked == [f"{warning} Move Orders #{first} to Confirmed all the same?"]
    assert screens_site.row("orders", first)["status"] == "placed"
    # Moving the confirmed one to Ready warns of nothing: no timed rule leaves Ready.
    expect(page.locator(f"#aside-orders-{confirmed} .again-warning")).to_have_count(0)

    # Save says so in the item and in a toast (the item stays set aside).
    value.fill("at the door")
    page.locator(f"#aside-orders-{first}-save").click()
    saved = f"Saved: Orders #{first}: Note is now at the door."
    expect(item.locator(".said")).to_contain_text(f"{saved} It stays set aside until it moves")
    expect(page.locator("#toasts .toast").last).to_have_text(saved)
    screenshot("toast_saved")

    # After "Try again now" succeeds, its line says what became of it, and nothing
    # says it stays set aside.
    page.locator(f"#aside-orders-{first}-retry").click()
    done = page.locator(f"#done-aside-orders-{first}")
    expect(done).to_have_text(f"Orders #{first} moved to Cancelled by its timed move.")
    expect(item).to_have_count(0)
    expect(page.locator("#set-aside-list")).not_to_contain_text("stays set aside")
    assert screens_site.row("orders", first)["status"] == "cancelled"

    # Several at once: a placed and a confirmed row share only one move, Cancelled.
    bulk_to = page.locator("#bulk-to option:not([disabled])")
    page.locator(f"#aside-orders-{second}-pick").check()
    expect(bulk_to).to_have_text(["Confirmed", "Cancelled"])
    page.locator(f"#aside-orders-{confirmed}-pick").check()
    expect(bulk_to).to_have_text(["Cancelled"])
    page.locator(f"#aside-orders-{confirmed}-pick").uncheck()

    # A refusal answers with its status (422 VALUE_REFUSED: tried again
    # with no note) and its words are swapped in where the person acted.
    with page.expect_response(lambda answer: answer.url.endswith("/retry")) as answered:
        page.locator(f"#aside-orders-{second}-retry").click()
    assert answered.value.status == 422
    # In plain words, with what to do; the toast shows the code apart (issue 35).
    refused = (
        f"Tried again now, refused again: Orders #{second}: Needs a note before it can be"
        " cancelled. Fill in Note, then try again."
    )
    expect(page.locator(f"#aside-orders-{second} .said.refused")).to_have_text(refused)
    toast = page.locator("#toasts .toast.refused").last
    expect(toast.locator(".toast-words")).to_have_text(refused)
    expect(toast.locator("code")).to_have_text("VALUE_REFUSED")

    # A move by hand answers "moved … by you" with the listed undo; Undo puts it back.
    page.locator(f"#aside-orders-{confirmed}-move-ready").click()
    moved = f"Orders #{confirmed} moved to Ready by you."
    expect(page.locator(f"#done-aside-orders-{confirmed}")).to_have_text(moved)
    toast = page.locator("#toasts .toast", has_text=moved)
    expect(toast).to_be_visible()
    screenshot("toast_moved")
    assert screens_site.row("orders", confirmed)["status"] == "ready"


def test_a_list_asked_for_before_a_fix_never_draws_over_the_fix(
    page: Page, base: str, screens_site: Site, redis_url: str
) -> None:
    # One placed order without a note, picked up Thu 9 July 12:30 BST: rule 1 cancels it at
    # closing, 21:00 BST = 20:00 UTC, refused (a cancelled order needs a note); swept at 20:01.
    # The module's site is shared: the venue's rule is taken away again at the end.
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text(f"{NO_NOTE_RULE};{NEEDS_NOTE}"))
    try:
        fix_while_the_list_is_out(page, base, screens_site, redis_url)
    finally:
        with screens_site.store().engine.begin() as conn:
            conn.execute(sa.text(NO_NOTE_RULE))


def fix_while_the_list_is_out(page: Page, base: str, screens_site: Site, redis_url: str) -> None:
    key = add_order(screens_site, at("2026-07-09 11:30"))
    sweep(screens_site, redis_url, "2026-07-09 20:01")
    screens_site.clock.now = at("2026-07-09 20:04")
    listed = "**/connections/venue/set-aside/list"
    held: list[Route] = []

    def hold_first(route: Route) -> None:  # the list the socket's opening asks for, held
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route(listed, hold_first)
    sign_in(page, base, "staff@venue.test", "/connections/venue/set-aside")
    wait_live(page)
    item, note = page.locator(f"#aside-orders-{key}"), f"#aside-orders-{key}-value"
    expect(item).to_contain_text("must be filled when cancelled")
    # The list as it was read before the fix: Note empty.
    before = page.request.get(f"{base}/connections/venue/set-aside/list")
    assert before.ok and f'id="aside-orders-{key}"' in before.text()

    # The fix is saved and answered while the list is still out.
    page.fill(note, "at the door")
    page.locator(f"#aside-orders-{key}-save").click()
    saved = f"Saved: Orders #{key}: Note is now at the door."
    expect(item.locator(".said")).to_contain_text(saved)
    assert len(held) == 1
    page.evaluate("document.getElementById('set-aside-list').dataset.drawn = 'before'")

    # The list read before the fix lands after its answer: it is not drawn, but asked for
    # again, drawn as the row is now, and what the fix said stays.
    def asked_again(answer: object) -> bool:
        return getattr(answer, "request", None) is not held[0].request and str(
            getattr(answer, "url", "")
        ).endswith("/set-aside/list")

    with page.expect_response(asked_again):
        held[0].fulfill(status=200, content_type="text/html", body=before.text())
    expect(page.locator("#set-aside-list[data-drawn]")).to_have_count(0)
    expect(item.locator("dl.facts")).to_contain_text("at the door")
    expect(item.locator(".said")).to_contain_text(saved)

    # A list that lands while a fix is still out is not drawn either: the fix's answer lands
    # in the page, then the list is asked for again.
    saves: list[Route] = []
    page.route(f"**/set-aside/venue/orders/{key}/edit", lambda route: saves.append(route))
    page.select_option(f"#aside-orders-{key}-field", label="Channel")
    page.fill(note, "phone")
    with page.expect_request(lambda request: request.url.endswith("/edit")):
        page.locator(f"#aside-orders-{key}-save").click()
    page.evaluate("document.getElementById('set-aside-list').dataset.drawn = 'before'")
    with page.expect_response(lambda answer: answer.url.endswith("/set-aside/list")):
        page.evaluate("htmx.trigger(document.querySelector('[ws-connect]'), 'adminium:back')")
    expect(page.locator("#set-aside-list[data-drawn]")).to_have_count(1)
    with page.expect_response(lambda answer: answer.url.endswith("/set-aside/list")):
        saves[0].continue_()
    expect(page.locator("#set-aside-list[data-drawn]")).to_have_count(0)
    expect(item.locator(".said")).to_contain_text(f"Saved: Orders #{key}: Channel is now phone.")
    assert screens_site.row("orders", key)["channel"] == "phone"


def test_a_move_on_the_row_page_toasts_with_undo_and_undo_puts_it_back(
    page: Page, base: str, screens_site: Site, screenshot: Callable[[str], Path]
) -> None:
    screens_site.clock.now = at("2026-07-10 09:00")
    key = add_order(screens_site, at("2026-07-11 11:30"))
    # The refetch the socket's opening makes may land after the move's answer: it is then
    # asked for again and what the move said stays (static/js/screens.js).
    sign_in(page, base, "staff@venue.test", f"/apps/venue/venue/orders/{key}")
    wait_live(page)
    page.locator(f"#detail-orders-{key}-move-confirmed").click()
    moved = f"Orders #{key} moved to Confirmed by you."
    expect(page.locator(".row-detail .said")).to_have_text(moved)
    toast = page.locator("#toasts .toast", has_text=moved)
    expect(toast.get_by_role("button", name="Undo to Placed")).to_be_visible()
    page.set_viewport_size({"width": 390, "height": 800})
    screenshot("toast_undo_phone")
    toast.get_by_role("button", name="Undo to Placed").click()
    expect(
        page.locator("#toasts .toast", has_text=f"Orders #{key} moved to Placed by you.")
    ).to_be_visible()
    expect(page.locator(".row-detail .badge").first).to_have_text("Placed", timeout=LIVE_MS)
    assert screens_site.row("orders", key)["status"] == "placed"


def test_the_sign_in_page_names_the_demo_account_while_it_signs_in(
    page: Page, base: str, screens_site: Site
) -> None:
    page.goto(f"{base}/signin")
    expect(page.locator("#demo-hint")).to_have_count(0)
    with screens_site.app.app_context():
        add_user(db.session, DEMO_EMAIL, "manager", "venue/venue", password=DEMO_PASSWORD)
    forget_demo_check()
    page.goto(f"{base}/signin")
    expect(page.locator("#demo-hint")).to_have_text(
        f"The demo is installed: sign in as {DEMO_EMAIL} with the password {DEMO_PASSWORD}"
        " (manager of its three apps)."
    )
    page.get_by_label("Email").fill(DEMO_EMAIL)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_title("Connections · Adminium")


def test_pause_and_resume_answer_with_a_toast(page: Page, base: str) -> None:
    sign_in(page, base, "admin@venue.test")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Pause").click()
    expect(page.locator("#toasts .toast").last).to_have_text(
        "venue paused by you: no timed move is made on its apps until it is resumed."
    )
    page.get_by_role("button", name="Resume").click()
    expect(page.locator("#toasts .toast").last).to_have_text(
        "venue resumed by you: every row already due moves at the next sweep."
    )
