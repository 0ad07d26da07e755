"""A table's `states.titles` names only states the table has: a title for another is refused
with a sentence listing the states it may name."""

from __future__ import annotations

from tests.core.manifest_cases import ORDERS, put, refused

ORDER_STATES = "placed, confirmed, preparing, ready, picked_up, cancelled"


def test_a_title_for_a_state_the_table_has_is_taken() -> None:
    assert refused("takeaway", put(*ORDERS, "titles", value={"picked_up": "Collected"})) == []


def test_a_title_for_a_state_the_table_lacks_is_refused_with_its_states() -> None:
    titles = {"ready": "Ready", "collected": "Collected"}
    assert refused("takeaway", put(*ORDERS, "titles", value=titles)) == [
        (
            "tables.orders.states.titles.collected",
            f'"orders" has no state "collected": its states are {ORDER_STATES}:'
            " a title names one of them",
        )
    ]
