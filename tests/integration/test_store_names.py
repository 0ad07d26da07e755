"""Names Adminium gives in a connection's database fit PostgreSQL's 63 bytes and never clash.

PostgreSQL cuts a longer name to 63 bytes, so two timed rules' indexes on long names
became one name, and `CREATE INDEX IF NOT EXISTS` silently skipped the second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from core.manifest.model import load_app
from core.store.install import install_app, timed_indexes
from core.store.store import make_engine

TABLE = "reservations_for_the_summer_terrace_garden"  # 42 bytes
FIRST, SECOND = "confirmation_deadline_for_the_guest_one", "confirmation_deadline_for_the_guest_two"
STATES = "arrangement_of_the_reservation_in_its_day"

LONG: dict[str, Any] = {
    "name": "terrace",
    "tables": {
        TABLE: {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": STATES, "type": "enum", "values": ["asked", "held", "gone"]},
                {"ref": f"{STATES}_x", "type": "enum", "values": ["a", "b"], "nullable": True},
                {"ref": FIRST, "type": "timestamptz", "nullable": True},
                {"ref": SECOND, "type": "timestamptz", "nullable": True},
            ],
            "states": {
                "column": STATES,
                "initial": "asked",
                "moves": {"asked": ["held", "gone"], "held": ["gone"]},
                "timed": [
                    {"from": "asked", "to": "gone", "at": {"column": FIRST}},
                    {"from": "held", "to": "gone", "at": {"column": SECOND}},
                ],
            },
        }
    },
}


def index_name(statement: str) -> str:
    return statement.split('"')[1]


def test_long_names_give_two_distinct_index_names_that_fit() -> None:
    names = [index_name(s) for s in timed_indexes(load_app(LONG))]
    assert len(names) == len(set(names)) == 2
    assert all(len(name.encode()) <= 63 for name in names)
    # Still readable: the start of what is indexed, then a short hash of the whole name.
    assert all(name.startswith(f"ix_{TABLE}_") for name in names)


def test_a_short_name_is_kept_as_it_was() -> None:
    short = {**LONG, "tables": {"t": {**LONG["tables"][TABLE]}}}
    short["tables"]["t"]["columns"] = [
        {**c, "ref": c["ref"][:8] if c["ref"] != "id" else "id"}
        for c in LONG["tables"][TABLE]["columns"]
    ]
    short["tables"]["t"]["states"] = {
        **LONG["tables"][TABLE]["states"],
        "column": STATES[:8],
        "timed": [{"from": "asked", "to": "gone", "at": {"column": FIRST[:8]}}],
    }
    assert [index_name(s) for s in timed_indexes(load_app(short))] == [
        f"ix_t_{STATES[:8]}_{FIRST[:8]}"
    ]


def test_both_indexes_exist_after_install(make_database: Callable[[], str]) -> None:
    app = load_app(LONG)
    engine = make_engine(make_database())
    try:
        install_app(engine, app)
        install_app(engine, app)  # still idempotent
        with engine.connect() as conn:
            made = conn.execute(
                sa.text("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = :t"),
                {"t": TABLE},
            ).all()
    finally:
        engine.dispose()
    wanted = {index_name(s) for s in timed_indexes(app)}
    assert wanted <= {row.indexname for row in made}
    defs = " ".join(row.indexdef for row in made)
    assert FIRST in defs and SECOND in defs


def test_two_long_enum_columns_get_two_checks(make_database: Callable[[], str]) -> None:
    # Their `ck_<table>_<column>` names share the first 63 bytes; SQLAlchemy refused to
    # make the table at all.
    engine = make_engine(make_database())
    try:
        install_app(engine, load_app(LONG))
        with engine.connect() as conn:
            checks = conn.execute(
                sa.text(
                    "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
                    " WHERE contype = 'c' AND conrelid = CAST(:t AS regclass)"
                ),
                {"t": TABLE},
            ).all()
    finally:
        engine.dispose()
    assert len({name for name, _ in checks}) == 2
    assert all(len(name.encode()) <= 63 for name, _ in checks)
    assert any("'gone'" in definition for _, definition in checks)
    assert any("'b'" in definition for _, definition in checks)
