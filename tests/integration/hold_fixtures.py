"""Many holds at once for the tests of examples/tickets.json: till tickets paid by gift
card, written by one SQL statement with what the write pipeline writes for each, column for
column (the ticket, its take entry, its held posting record, its card's balance), because
a thousand writes through the pipeline would cost seconds.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.engine import Connection

_TAKE_HOLDS = """
WITH made AS (
    INSERT INTO tickets.till_tickets (items, total, gift_card_id, card_paid, opened_at, status)
    SELECT 'tea', 1, (SELECT array_agg(id ORDER BY id) FROM tickets.gift_cards)[1 + n %% {cards}],
           1, %(opened)s, 'open'
    FROM generate_series(0, {holds} - 1) AS n
    RETURNING id, gift_card_id
), numbered AS (
    SELECT made.id, made.gift_card_id,
           card.balance - row_number() OVER (PARTITION BY made.gift_card_id ORDER BY made.id)
               AS after
    FROM made JOIN tickets.gift_cards AS card ON card.id = made.gift_card_id
), entered AS (
    INSERT INTO adminium.ledger_entries
        (app, ledger, account, amount, balance, table_name, row_key, posting, kind, actor, at)
    SELECT 'tickets', 'gift_cards', gift_card_id::text, -1, after, 'till_tickets', id::text,
           1, 'take', 'staff@example.com', %(opened)s
    FROM numbered ORDER BY numbered.id
), posted AS (
    INSERT INTO adminium.postings
        (app, table_name, row_key, posting, ledger, account, amount, status, held_until, at)
    SELECT 'tickets', 'till_tickets', id::text, 1, 'gift_cards', gift_card_id::text, 1, 'held',
           %(until)s, %(opened)s
    FROM made
)
UPDATE tickets.gift_cards AS card SET balance = card.balance - taken.n
FROM (SELECT gift_card_id, count(*) AS n FROM made GROUP BY gift_card_id) AS taken
WHERE card.id = taken.gift_card_id
"""


def take_holds(
    conn: Connection, holds: int, cards: int, *, opened: datetime, until: datetime
) -> None:
    """`holds` open till tickets paid 1 each by the first `cards` gift cards in turn,
    opened at `opened`, each a hold until `until`."""
    sql = _TAKE_HOLDS.format(cards=cards, holds=holds)
    conn.exec_driver_sql(sql, {"opened": opened, "until": until})
