"""Apps: manifests that passed the check, saved on a connection, and the store each one opens."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from sqlalchemy import URL, bindparam, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.agreement.compare import NO_RENAMES, Comparison, Renames
from core.agreement.plan import Step
from core.agreement.privileges import Missing
from core.basics.values import text_fault
from core.manifest.model import App as AppManifest
from core.manifest.model import load_app
from core.store.install import install_adminium
from core.store.readable import unreadable_columns
from core.store.store import Store
from core.sweep.minute_work import has_minute_work
from services.agreement import (
    Asked,
    install_tables,
    log_comparison,
    record_comparison,
    refresh_agreements,
)
from services.connections import get_connection
from services.control_version import ANNOUNCER, CHECK_SECONDS, read_version
from services.errors import (
    AlreadyExists,
    DatabaseRefused,
    InvalidValue,
    ManifestRefused,
    NotFound,
    TablesDisagree,
    first_line,
)
from services.indexes import make_indexes
from services.manifests import refuse_failed_check
from services.models import DEFAULT_ZONE, Agreement, App, Connection
from services.recent import LeastRecent
from services.storage import connection_engine, engine_for

T = TypeVar("T")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Added:
    """An app saved (`add_app`): the app, the steps made on its tables, the comparison of
    its manifest with them after, and what the connection's user may not do of them."""

    app: App
    ran: tuple[Step, ...]
    after: Comparison
    lacking: tuple[Missing, ...] = ()


def add_app(session: Session, connection_name: str, manifest: dict[str, Any], **asked: Any) -> App:
    """Save an app on a connection (`install_manifest`, which says what it does); the app."""
    return install_manifest(session, connection_name, manifest, **asked).app


def install_manifest(
    session: Session,
    connection_name: str,
    manifest: dict[str, Any],
    *,
    replace: bool = False,
    create_tables: bool = False,
    migrate: bool = False,
    yes: bool = False,
    renames: Renames = NO_RENAMES,
    now: datetime | None = None,
) -> Added:
    """Save an app on a connection once the manifest check passes and its tables can serve
    it; refuse with the check's sentences, or the comparison's (TablesDisagree).

    The manifest is compared with the connection's tables first (`services.agreement`), in
    one transaction under the install lock that also makes Adminium's schema where it is
    missing. With `create_tables`, the tables the database lacks (and the indexes the
    clock wants on them) are made; with `migrate`, the plan is applied to the tables
    Adminium made (`yes` for its destructive steps). The app is saved only if that works,
    and its comparison is kept (`models.Agreement`)."""
    connection, app, model = _checked(session, connection_name, manifest, replace)
    asked = Asked(create_tables, migrate, yes, renames)
    try:
        refuse_unreadable_columns(connection, model)
        installed = install_tables(connection_engine(connection), model, connection_name, asked)
    except (TablesDisagree, DatabaseRefused, InvalidValue, ManifestRefused):
        session.rollback()
        raise
    app = _saved(session, connection, app, manifest)
    after = installed.after
    record_comparison(session, app, after, now or datetime.now(UTC))
    session.commit()
    if not after.agree:
        log_comparison(connection_name, after)
    return Added(app, installed.ran, after, installed.lacking)


def save_app(
    session: Session, connection_name: str, manifest: dict[str, Any], *, replace: bool = False
) -> App:
    """Check a manifest and save it as an app of the connection, its tables neither compared
    nor touched: the control-plane half of `install_manifest` (which `app add` runs), for a
    control plane whose venue's tables are compared apart, and for the control plane's own
    tests; the sweep and `adminium run` compare it once they find it."""
    connection, app, _ = _checked(session, connection_name, manifest, replace)
    return _saved(session, connection, app, manifest)


def _checked(
    session: Session, connection_name: str, manifest: dict[str, Any], replace: bool
) -> tuple[Connection, App | None, AppManifest]:
    """The connection, its app of the manifest's name (if any), and the checked manifest;
    refused when it fails the check, shares a table, or is there and `replace` is not."""
    connection = get_connection(session, connection_name)
    refuse_failed_check(manifest)
    model = load_app(manifest)
    refuse_shared_tables(connection, model)
    app = session.scalar(select(App).where(App.connection == connection, App.name == model.name))
    if app is not None and not replace:
        raise AlreadyExists(
            f"connection {connection_name!r} already has an app named {model.name!r}",
            {"connection": connection_name, "app": model.name},
        )
    return connection, app, model


def _saved(
    session: Session, connection: Connection, app: App | None, manifest: dict[str, Any]
) -> App:
    """The app made or given the new manifest, committed."""
    if app is None:
        app = App(connection=connection, name=str(manifest["name"]), manifest=manifest)
        session.add(app)
    else:
        app.manifest = manifest
    session.commit()
    log.info("app %s saved on connection %s", app.name, connection.name)
    return app


def refuse_unreadable_columns(connection: Connection, model: AppManifest) -> None:
    """Refuse a manifest that types a column of the connection's database as it cannot be
    read (`core.store.readable`), each with its fix (ManifestRefused); a database that does
    not answer is logged and the manifest let through (its rows are judged as they are read:
    the pending screen counts a moment it cannot read)."""
    try:
        with connection_engine(connection).connect() as conn:
            found = unreadable_columns(conn, model, connection.zone_name)
    except SQLAlchemyError as error:
        log.warning(
            "app %s: the column types of connection %s not read: %s",
            model.name,
            connection.name,
            first_line(error),
        )
        return
    if found:
        raise ManifestRefused(
            "the connection's tables cannot be read as the manifest types them: "
            + "; ".join(f"{u.where}: {u.sentence}" for u in found),
            {"refusals": [{"where": u.where, "sentence": u.sentence} for u in found]},
        )


def refuse_shared_tables(connection: Connection, new: AppManifest) -> None:
    """Two apps of one connection never keep a table of the same name in the same schema."""
    for other in connection.apps:
        if other.name == new.name or other.model.schema_name != new.schema_name:
            continue
        shared = sorted(set(other.model.tables) & set(new.tables))
        if shared:
            raise AlreadyExists(
                f"app {other.name!r} of this connection already keeps {', '.join(shared)} in "
                f"schema {new.schema_name!r}: give app {new.name!r} a schema of its own "
                f'("schema": "{new.name}")',
                {"app": other.name, "tables": shared, "schema": new.schema_name},
            )


def app_store(app: App) -> Store:
    """The pipeline's view of an app: its tables on the connection's database, its zone.
    Built once per parsed manifest, engine, zone and connection name, and kept
    (`STORES`): a screen asks each app's store a few times a request."""
    connection = app.connection
    model, engine, zone = app.model, connection_engine(connection), connection.zone_name
    kept = STORES.get(app.id) if app.id is not None else None
    if (
        kept is not None
        and (kept.app is model and kept.engine is engine and kept.zone.key == zone)
        and kept.connection == connection.name
    ):
        return kept
    store = Store(engine, model, ZoneInfo(zone), connection=connection.name)
    if app.id is not None:
        STORES.put(app.id, store)
    return store


def swept_stores(connection: Connection) -> list[Store]:
    """The stores of a connection's apps the minute job has work for (what the sweep reads)."""
    return [app_store(app) for app in connection.apps if app.has_minute_work]


WARM_APPS = int(os.environ.get("ADMINIUM_WARM_APPS", "5000"))
"""How many apps' parsed manifests and stores a process keeps for its sweeps
(ADMINIUM_WARM_APPS): a worker sweeping thousands of connections a minute parses a manifest
and builds its tables once, not once a minute (docs/operations.md, "Running at scale")."""

STORES: LeastRecent[int, Store] = LeastRecent(WARM_APPS)
"""Each app's store by its id; it serves while its parsed manifest (the one object
`services.models.PARSED` serves), engine, zone and connection name are the app's."""


@dataclass(frozen=True)
class SweptApps:
    """What a sweep reads of the control plane: the pause, the stores it sweeps, and the
    catalogue fingerprint each app's kept comparison with its tables was read at (None:
    never compared, or compared with a manifest saved before)."""

    paused: bool
    stores: list[Store]
    compared_at: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class _Warm:
    """An app as a sweep last read it: its row's `updated_at`, where it lived, its store
    (None when the minute job has no work for it)."""

    updated_at: datetime
    url: str
    zone: str
    store: Store | None


WARM: LeastRecent[tuple[URL, int], _Warm] = LeastRecent(WARM_APPS)
"""This process's apps as its sweeps last read them, by (control plane's URL, app id)."""

_CONNECTIONS, _APPS = Connection.__table__.c, App.__table__.c
_AGREED = Agreement.__table__.c
_SWEPT = (
    select(
        _CONNECTIONS.paused,
        _CONNECTIONS.url,
        _CONNECTIONS.zone,
        _APPS.id,
        _APPS.updated_at,
        _APPS.name,
        _AGREED.fingerprint,
        _AGREED.manifest_at,
    )
    .select_from(
        Connection.__table__.outerjoin(
            App.__table__, _APPS.connection_id == _CONNECTIONS.id
        ).outerjoin(Agreement.__table__, _AGREED.app_id == _APPS.id)
    )
    .where(_CONNECTIONS.name == bindparam("name"))
    .order_by(_APPS.id)
)
"""A connection's pause, URL and zone, and each of its apps' id, `updated_at`, name and
the fingerprint its kept comparison was read at (one row with no app when it has none):
built once, its compiled form cached by the engine."""
_SAVED = select(_APPS.id, _APPS.updated_at, _APPS.manifest).where(
    _APPS.id.in_(bindparam("ids", expanding=True))
)
"""The saved manifests of the apps named (those a sweep has not parsed as they are)."""


class SweptReads:
    """A worker's reads of the control plane for its sweeps (`_SWEPT`, by connection), kept
    while nothing could have changed them: each is kept under the announcements' token as
    the job that read it started (`services.control_version.TOKEN`, read in the pipeline the
    worker sends as it starts a job: every announced write sets a new one before the writer
    goes on), and under this process's count of its own writes and of the control plane's
    version moving (read every CHECK_SECONDS: a write nobody announced, a console command
    run without REDIS_URL or SQL typed by hand). A job with no token reads as before."""

    def __init__(self, size: int = WARM_APPS) -> None:
        self._kept: LeastRecent[tuple[URL, str], tuple[tuple[str, int], Sequence[Any]]] = (
            LeastRecent(size)
        )
        self._generation = 0
        self._version: int | None = None
        self._checked = float("-inf")
        self._lock = threading.Lock()
        ANNOUNCER.hear(self)

    def changed(self) -> None:
        """This process wrote the control plane (`services.control_version.ANNOUNCER`)."""
        with self._lock:
            self._generation += 1

    def rows(
        self,
        session: Session,
        key: tuple[URL, str],
        token: str | None,
        read: Callable[[], Sequence[Any]],
    ) -> Sequence[Any]:
        """What `read` gives for `key`: kept from an earlier job when the token is the same
        and this process has seen no change since; read (and kept) otherwise."""
        if token is None:
            return read()
        tag = (token, self._generation_now(session))
        held = self._kept.get(key)
        if held is not None and held[0] == tag:
            return held[1]
        found = read()
        self._kept.put(key, (tag, found))
        return found

    def _generation_now(self, session: Session) -> int:
        if time.monotonic() - self._checked >= CHECK_SECONDS:
            version = read_version(session.connection())
            with self._lock:
                if version != self._version:
                    self._version = version
                    self._generation += 1
                self._checked = time.monotonic()
        with self._lock:
            return self._generation


SWEPT_READS = SweptReads()
"""This process's kept sweep reads (a worker's)."""


def swept_apps(session: Session, name: str, token: str | None = None) -> SweptApps:
    """A connection's pause and the stores of its apps the minute job has work for, in one
    read of the control plane: each app's manifest is read and parsed, and its tables
    built, only when the app was saved (its `updated_at` moved) or its connection's URL or
    zone changed since this process last swept it. With the announcements' `token` as the
    job started (a worker's job), the read itself is kept between jobs while no write of
    the control plane was announced or seen (`SweptReads`): an idle sweep then reads none."""
    if text_fault(name):
        raise NotFound(f"no connection named {name!r}", {"connection": name})
    plane = session.get_bind().url
    # A Core statement on the session's connection: no ORM layer around its one round trip.
    rows = SWEPT_READS.rows(
        session,
        (plane, name),
        token,
        lambda: tuple(session.connection().execute(_SWEPT, {"name": name}).all()),
    )
    if not rows:
        raise NotFound(f"no connection named {name!r}", {"connection": name})
    paused, url, zone = bool(rows[0][0]), str(rows[0][1]), rows[0][2] or DEFAULT_ZONE
    engine = engine_for(url)
    apps: dict[int, _Warm | None] = {}
    compared: dict[str, str | None] = {}
    for *_, app_id, updated_at, app_name, fingerprint, manifest_at in rows:
        if app_id is None:
            continue  # a connection with no app
        compared[app_name] = fingerprint if manifest_at == updated_at else None
        warm = WARM.get((plane, app_id))
        read_as = (updated_at, url, zone)
        same = warm is not None and (warm.updated_at, warm.url, warm.zone) == read_as
        apps[app_id] = warm if same else None
    stale = [app_id for app_id, warm in apps.items() if warm is None]
    if stale:
        for app_id, updated_at, manifest in session.connection().execute(_SAVED, {"ids": stale}):
            model = load_app(manifest)
            work = has_minute_work(model)
            store = Store(engine, model, ZoneInfo(zone), connection=name) if work else None
            apps[app_id] = read = _Warm(updated_at, url, zone, store)
            WARM.put((plane, app_id), read)
    stores: list[Store] = []
    for app_id, warm in apps.items():
        if warm is None or warm.store is None:
            continue  # no work for the minute job (or removed since the first read)
        store = warm.store
        if store.engine is not engine:
            # The engine was let go of to keep the warm engines bounded: a store on the
            # current one (the parsed manifest and its tables kept).
            store = store.on_engine(engine)
            WARM.put((plane, app_id), _Warm(warm.updated_at, url, zone, store))
        stores.append(store)
    return SweptApps(paused, stores, compared)


def lookup_app(session: Session, connection: str, name: str) -> App | None:
    """The app of that name on that connection, or None."""
    if text_fault(connection) or text_fault(name):
        return None  # no name holds a NUL (the database would refuse to compare one)
    query = select(App).join(App.connection).where(Connection.name == connection, App.name == name)
    return session.scalar(query)


def table_owner(
    connection_name: str, ref: str, apps: Iterable[tuple[str, Collection[str], T]]
) -> tuple[T, str]:
    """Which of a connection's apps has the table `ref` names (`table`, or `app.table` when
    several have one), and the table's name; `apps` holds each app's name, its tables and
    what to give back for it."""
    app_name, _, table = ref.rpartition(".")
    owners = [item for name, tables, item in apps if table in tables and app_name in ("", name)]
    if not owners:
        raise NotFound(
            f"no app of connection {connection_name!r} has a table {table!r}",
            {"connection": connection_name, "table": table},
        )
    if len(owners) > 1:
        raise InvalidValue(
            f"several apps have a table {table!r}: write app.{table}", {"table": table}
        )
    return owners[0], table


def find_table(session: Session, connection_name: str, table: str) -> App:
    """The app of a connection that has `table`; `app.table` when several have one."""
    connection = get_connection(session, connection_name)
    apps = ((a.name, a.model.tables, a) for a in connection.apps)
    return table_owner(connection_name, table, apps)[0]


def find_app(session: Session, ref: str) -> App:
    """An app by `connection/app`, or by its name alone when only one connection has it."""
    connection_name, _, name = ref.rpartition("/")
    query = select(App).where(App.name == name)
    if connection_name:
        query = query.join(App.connection).where(Connection.name == connection_name)
    apps = list(session.scalars(query))
    if not apps:
        raise NotFound(f"no app named {ref!r}", {"app": ref})
    if len(apps) > 1:
        raise InvalidValue(
            f"several connections have an app named {name!r}: write connection/{name}",
            {"app": ref},
        )
    return apps[0]


def install_adminium_tables(session: Session, *, now: datetime | None = None) -> None:
    """Adminium's own tables in each connection's database, those a newer version added
    included; the indexes each app wants on the tables Adminium made that its database
    lacks (`services.indexes`: built concurrently; a table of the venue's own is never
    indexed unasked); and each app compared again with its tables where they changed since
    (`services.agreement.refresh_agreements`). Idempotent; the app's own tables are left as
    they are. A database that does not answer is logged and skipped."""
    for connection in list(session.scalars(select(Connection).order_by(Connection.name))):
        try:
            engine = connection_engine(connection)
            with engine.begin() as conn:
                install_adminium(conn)  # in turn with an install_app at the same moment
            for app in connection.apps:
                make_indexes(engine, app.model, connection=connection.name)
            refresh_agreements(session, connection, now=now or datetime.now(UTC), engine=engine)
        except SQLAlchemyError as error:
            log.warning(
                "Adminium's tables not checked on connection %s: %s",
                connection.name,
                first_line(error),
            )
