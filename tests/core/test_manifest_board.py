"""A table's `board` names the columns its cards show and the time a row is for; the check
refuses a column the table lacks, one twice, the key or the state, contact details or a
secret (a wall is read by anyone in the room), and a time that is no time. Without it the
defaults come from the column types and never pick contact details."""

from __future__ import annotations

from core.manifest.board_rules import card_spec
from core.manifest.model import load_app
from tests.core.manifest_cases import example, put, refused

BOARD = ("tables", "orders", "board")


def test_the_examples_board_is_taken_and_read_in_order() -> None:
    assert refused("takeaway", put(*BOARD, value={"card": ["note", "items"]})) == []
    manifest = example("takeaway")
    manifest["tables"]["orders"]["board"] = {"card": ["note", "items"], "time": "pickup_at"}
    spec = card_spec(load_app(manifest).tables["orders"])
    assert [c.ref for c in spec.columns] == ["note", "items"]
    assert spec.time is not None and spec.time.ref == "pickup_at"


def test_a_board_naming_contact_details_a_secret_or_no_column_is_refused() -> None:
    board = {"card": ["email", "items", "items", "status", "pickup_code", "colour"]}
    assert refused("takeaway", put(*BOARD, value=board)) == [
        (
            "tables.orders.board.card[0]",
            '"orders.email" holds contact details (its name says so): a board and its wall'
            " are read by anyone in the room, so a card never shows it",
        ),
        ("tables.orders.board.card[2]", '"items" is listed twice'),
        (
            "tables.orders.board.card[3]",
            '"status" is the table\'s state: every card shows it already',
        ),
        ("tables.orders.board.card[4]", '"orders" has no column "pickup_code"'),
        ("tables.orders.board.card[5]", '"orders" has no column "colour"'),
    ]


def test_a_board_time_must_be_a_time_and_the_table_must_keep_states() -> None:
    assert refused("takeaway", put(*BOARD, value={"time": "items"})) == [
        (
            "tables.orders.board.time",
            '"orders.items" is text: a card\'s time is a timestamptz, a timestamp or a date column',
        )
    ]
    assert refused("takeaway", put("tables", "customers", "board", value={"card": []})) == [
        (
            "tables.customers.board",
            '"customers" keeps no states, so it has no board: give it "states" first',
        )
    ]


def test_without_a_board_the_defaults_skip_contact_details_links_rules_and_the_time() -> None:
    manifest = example("takeaway")
    del manifest["tables"]["orders"]["board"]
    spec = card_spec(load_app(manifest).tables["orders"])
    # id is the key, customer_id a link, email contact details, pickup_at the time (the
    # column rule 1's moment reads), total a rule's column, status the state.
    assert [c.ref for c in spec.columns] == ["items", "note", "cancel_code"]
    assert spec.time is not None and spec.time.ref == "pickup_at"
    hotel = example("hotel")
    del hotel["tables"]["stays"]["board"]
    stays = card_spec(load_app(hotel).tables["stays"])
    # guest_email is contact details; arrive (a date) is the time rule 1 reads.
    assert [c.ref for c in stays.columns] == ["guest_name", "nights", "arrival_time"]
    assert stays.time is not None and stays.time.ref == "arrive"


def test_a_card_names_at_most_six_columns() -> None:
    board = {"card": ["items", "note", "total", "cancel_code", "cancelled_at", "pickup_at", "id"]}
    found = refused("takeaway", put(*BOARD, value=board))
    assert [where for where, _ in found] == ["tables.orders.board.card"]
