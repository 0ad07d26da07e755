"""The manifest check: every refusal of an app's manifest, each with its place and sentence.

The model refuses wrong shapes and unknown fields first; only a manifest of the right
shape is judged by the rules that read the whole document (references, states, moments,
settings). So a manifest is answered with the shape's refusals or the rules', never both.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from core.manifest.all_day_rules import check_all_day
from core.manifest.automation_rules import check_automations
from core.manifest.board_rules import check_board
from core.manifest.column_rules import check_column
from core.manifest.effect_rules import check_effect_rules
from core.manifest.ledger_rules import check_ledger_rules
from core.manifest.lookup import (
    WHOLE_NUMBER_TYPES,
    Lookup,
    column_of,
    state_names,
    value_refusal,
)
from core.manifest.model import App, Column, Table, load_app
from core.manifest.moment_rules import (
    Out,
    Path,
    check_shift,
    check_whole_setting,
    no_column,
    no_table,
)
from core.manifest.outbox_model import Message, Reminder
from core.manifest.refs import ValueWatch
from core.manifest.refusal import Refusal, listing, shown, where
from core.manifest.state_rules import PUBLIC_ROLE, check_states, unknown_state
from core.manifest.structure import (
    content_refusals,
    decode_text,
    parse_text,
    structural_refusals,
)
from core.manifest.templates import template_refusals

__all__ = [
    "Refusal",
    "check_app",
    "check_manifest",
    "check_manifest_file",
    "check_manifest_text",
]

CODE_MIN = 16
"""The fewest characters a link code may have: 16 of a secrets token are 96 random bits.
The model reads shorter ones (a saved app keeps loading); the check refuses them."""


def check_manifest_file(data: bytes, name: str) -> list[Refusal]:
    """Check a manifest file's bytes: text that is not UTF-8 is one refusal naming the file."""
    text, refusals = decode_text(data, name)
    return refusals or check_manifest_text(text or "")


def check_manifest_text(text: str) -> list[Refusal]:
    """Check a manifest as written: malformed JSON is one refusal with its line and column."""
    data, refusals = parse_text(text)
    return refusals or check_manifest(data)


def check_manifest(app_json: Any) -> list[Refusal]:
    """Check parsed manifest JSON; an empty list means ok."""
    refusals = content_refusals(app_json)
    if not refusals:
        try:
            app = load_app(app_json)
        except ValidationError as error:
            refusals = structural_refusals(error)
        else:
            refusals = check_app(app)
    # Refusals echo names as written; a lone surrogate among them must still print.
    return [refusal.printable() for refusal in refusals]


def check_app(app: App) -> list[Refusal]:
    """The rules that read the whole document, for a manifest of the right shape."""
    lk = Lookup(app)
    out: Out = []
    _check_schema(out, app.schema_name)
    for index, role in enumerate(app.roles):
        if role == PUBLIC_ROLE:
            sentence = '"public" is kept for guests: give the staff role another name'
            out.append(Refusal(where("roles", index), sentence))
    for name, table in app.tables.items():
        _check_columns(lk, out, ("tables", name), name, table)
        check_states(lk, out, ("tables", name, "states"), name, table)
        _check_lock(out, ("tables", name, "lock"), name, table)
        check_board(out, ("tables", name, "board"), name, table)
        check_all_day(lk, out, ("tables", name, "board", "all_day"), name, table, _check_watch)
    check_ledger_rules(lk, out, _check_watch)
    check_effect_rules(lk, out, _check_watch)
    check_automations(lk, out, _check_watch)
    if app.outbox is not None:
        _check_outbox(lk, out)
    return out


def _check_schema(out: Out, schema: str) -> None:
    """An app's tables never share a schema with Adminium's own tables or PostgreSQL's catalog."""
    if schema.startswith("adminium"):
        sentence = (
            f"{shown(schema)} is where Adminium keeps its own tables (users, password and token"
            " hashes, the audit): an app there would show and change them; give the app a"
            " schema of its own"
        )
    elif schema.startswith("pg_") or schema == "information_schema":
        sentence = (
            f"{shown(schema)} is where PostgreSQL keeps its own catalog: an app there would"
            " show and change the database's roles and settings; give the app a schema of"
            " its own"
        )
    else:
        return
    out.append(Refusal(where("schema"), sentence))


def _check_columns(lk: Lookup, out: Out, at: Path, name: str, table: Table) -> None:
    if column_of(table, table.key) is None:
        out.append(Refusal(where(*at, "key"), f"{no_column(name, table.key)}: the key names one"))
    seen: dict[str, int] = {}
    for index, column in enumerate(table.columns):
        spot = (*at, "columns", index)
        if column.ref in seen:
            sentence = f'"{name}" already has a column "{column.ref}" (columns[{seen[column.ref]}])'
            out.append(Refusal(where(*spot, "ref"), sentence))
        seen.setdefault(column.ref, index)
        check_column(lk, out, spot, name, column)
        if column.rules is not None:
            _check_column_rules(lk, out, spot, name, table, column)


def _check_column_rules(
    lk: Lookup, out: Out, at: Path, name: str, table: Table, column: Column
) -> None:
    assert column.rules is not None
    stamp, code = column.rules.stamp, column.rules.code
    spot = (*at, "rules")
    if stamp and code:
        out.append(Refusal(where(*spot), "a column is written by one rule: a stamp or a code"))
    if stamp is not None:
        if column.type not in ("timestamptz", "timestamp"):
            sentence = (
                f'"{name}.{column.ref}" is {column.type}: a stamp writes a timestamptz'
                " or a timestamp"
            )
            out.append(Refusal(where(*spot, "stamp"), sentence))
        _check_watch(out, (*spot, "stamp", "on"), name, table, stamp.on)
        if stamp.set is not None:
            check_shift(lk, out, (*spot, "stamp", "set", "addMinutes"), stamp.set.add_minutes)
    if code is not None:
        if code.length < CODE_MIN:
            sentence = (
                f'"{name}.{column.ref}" makes codes of {code.length} characters: a link code'
                f" opens a row to whoever holds it, so it has at least {CODE_MIN}"
            )
            out.append(Refusal(where(*spot, "code", "length"), sentence))
        if column.type != "text":
            sentence = f'"{name}.{column.ref}" is {column.type}: a code is written to text'
            out.append(Refusal(where(*spot, "code"), sentence))
        elif column.max_length is not None and column.max_length < code.length:
            sentence = (
                f'"{name}.{column.ref}" holds {column.max_length} characters,'
                f" too few for a code of {code.length}"
            )
            out.append(Refusal(where(*spot, "code", "length"), sentence))
        watched = code.renew.on.column if code.renew else None
        if watched is not None and column_of(table, watched) is None:
            sentence = no_column(name, watched)
            out.append(Refusal(where(*spot, "code", "renew", "on", "column"), sentence))


def _check_watch(out: Out, at: Path, name: str, table: Table, watch: ValueWatch) -> None:
    """A watched column exists and each value is one it can take (a state, on the state column)."""
    column = column_of(table, watch.column)
    if column is None:
        out.append(Refusal(where(*at, "column"), no_column(name, watch.column)))
        return
    is_state = table.states is not None and table.states.column == watch.column
    states = state_names(table)
    for index, value in enumerate(watch.values):
        if is_state and value in states:
            continue  # a state too long for its column is refused once, where the moves name it
        if is_state:
            sentence = f'"{name}" has no state {shown(value)}: its states are {listing(states)}'
        else:
            sentence = value_refusal(name, column, value) or ""
        if sentence:
            out.append(Refusal(where(*at, "values", index), sentence))


def _check_lock(out: Out, at: Path, name: str, table: Table) -> None:
    """Each lock rule watches a real column and keeps real columns (or "*") shut."""
    for index, rule in enumerate(table.lock or ()):
        _check_watch(out, (*at, index, "when"), name, table, rule.when)
        for spot, column in enumerate(rule.columns):
            if column == "*":
                continue
            if column_of(table, column) is None:
                out.append(Refusal(where(*at, index, "columns", spot), no_column(name, column)))
            elif table.states is not None and column == table.states.column:
                sentence = (
                    f'"{name}.{column}" is the state column: only a listed move changes it,'
                    " so a lock never needs to name it"
                )
                out.append(Refusal(where(*at, index, "columns", spot), sentence))


def _check_outbox(lk: Lookup, out: Out) -> None:
    outbox = lk.app.outbox
    assert outbox is not None
    if outbox.settings is not None and lk.table(outbox.settings.table) is None:
        out.append(Refusal(where("outbox", "settings", "table"), no_table(outbox.settings.table)))
    for index, producer in enumerate(outbox.producers):
        spot = ("outbox", "producers", index)
        if isinstance(producer, Reminder):
            _check_reminder(lk, out, spot, producer)
        else:
            _check_message(lk, out, spot, producer)
        out.extend(template_refusals(spot, producer))


def _check_reminder(lk: Lookup, out: Out, at: Path, reminder: Reminder) -> None:
    before, lead = reminder.before, reminder.before.lead
    spot = (*at, "before")
    table = lk.table(before.table)
    if table is None:
        out.append(Refusal(where(*spot, "table"), no_table(before.table)))
        return
    column = column_of(table, before.at)
    if column is None:
        out.append(Refusal(where(*spot, "at"), no_column(before.table, before.at)))
    elif column.type != "timestamptz":
        sentence = (
            f'"{before.table}.{before.at}" is {column.type}: a reminder leads up to'
            " a timestamptz column"
        )
        out.append(Refusal(where(*spot, "at"), sentence))
    if reminder.to is not None:
        _check_address(out, (*at, "to"), before.table, table, reminder.to)
    elif not any(isinstance(p, Message) and p.table == before.table for p in _producers(lk.app)):
        sentence = (
            f'a reminder of "{before.table}" has no "to", and no message producer of'
            f' "{before.table}" lends it an address: give it "to", the text column of'
            f' "{before.table}" holding the address'
        )
        out.append(Refusal(where(*at), sentence))
    if reminder.states is not None:
        _check_reminded_states(out, (*at, "states"), before.table, table, reminder.states)
    lead_at = (*spot, "lead")
    if lead.via is None:
        check_whole_setting(lk, out, lead_at, lead.table, lead.column, "a lead")
    else:
        _check_linked_lead(lk, out, lead_at, before.table, lead.via, lead.table, lead.column)
    if lead.fallback is not None:
        fallback = (lead.fallback.table, lead.fallback.column)
        check_whole_setting(lk, out, (*lead_at, "fallback"), *fallback, "a lead")


def _producers(app: App) -> list[Message | Reminder]:
    return list(app.outbox.producers) if app.outbox is not None else []


def _check_reminded_states(out: Out, at: Path, name: str, table: Table, states: list[str]) -> None:
    """A reminder's `states`: at least one, each a state of its table."""
    if table.states is None:
        sentence = f'"{name}" has no states: "states" names states of the reminder\'s table'
        out.append(Refusal(where(*at), sentence))
        return
    if not states:
        out.append(Refusal(where(*at), '"states" names at least one state, or is left out'))
    known = state_names(table)
    for index, state in enumerate(states):
        if state not in known:
            out.append(Refusal(where(*at, index), unknown_state(name, state, known)))


def _check_linked_lead(
    lk: Lookup, out: Out, at: Path, table: str, via: str, target: str, column: str
) -> None:
    link = lk.column(table, via)
    if link is None:
        out.append(Refusal(where(*at, "via"), no_column(table, via)))
        return
    if link.references != target:
        pointed = f'points at "{link.references}"' if link.references else "is no foreign key"
        sentence = f'"{table}.{via}" {pointed}: "via" names a column that points at "{target}"'
        out.append(Refusal(where(*at, "via"), sentence))
        return
    found = lk.column(target, column)
    if found is None:
        out.append(Refusal(where(*at, "column"), no_column(target, column)))
    elif found.type not in WHOLE_NUMBER_TYPES:
        sentence = f'"{target}.{column}" is {found.type}: a lead is a whole number of hours'
        out.append(Refusal(where(*at, "column"), sentence))


def _check_message(lk: Lookup, out: Out, at: Path, message: Message) -> None:
    table = lk.table(message.table)
    if table is None:
        out.append(Refusal(where(*at, "table"), no_table(message.table)))
        return
    _check_watch(out, (*at, "on"), message.table, table, message.on)
    _check_address(out, (*at, "to"), message.table, table, message.to)


def _check_address(out: Out, at: Path, name: str, table: Table, to: str) -> None:
    address = column_of(table, to)
    if address is None:
        out.append(Refusal(where(*at), no_column(name, to)))
    elif address.type != "text":
        sentence = f'"{name}.{to}" is {address.type}: an address is text'
        out.append(Refusal(where(*at), sentence))
