"""The control plane's tables: connections, apps, webhooks, users and their roles
(Flask-SQLAlchemy).

They live in Adminium's own database (`DATABASE_URL`), in a schema of their own
(`adminium_control`), so that database may also serve as a connection's database
without its app tables meeting ours. Alembic (`migrations/`) creates them.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from flask import Flask
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    ForeignKey,
    MetaData,
    String,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from core.manifest.model import App as AppManifest
from core.manifest.model import load_app
from core.sweep.minute_work import has_minute_work
from services.recent import LeastRecent
from services.urls import hide_password, sqlalchemy_url

SCHEMA = "adminium_control"
"""The control plane's PostgreSQL schema in Adminium's own database."""

ADMIN = "admin"
"""The role that may do everything in every app."""

DEFAULT_ZONE = "UTC"
"""A connection's zone when none is set."""


class Base(DeclarativeBase):
    """Declarative base: the control-plane schema and stable constraint names."""

    metadata = MetaData(
        schema=SCHEMA,
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        },
    )


db = SQLAlchemy(model_class=Base)


class Connection(db.Model):  # type: ignore[name-defined,misc]
    """A venue's PostgreSQL database: its URL (never shown), venue zone, paused or not."""

    __tablename__ = "connections"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(63), unique=True)
    url: Mapped[str] = mapped_column(String(2000))
    zone: Mapped[str | None] = mapped_column(String(64))
    paused: Mapped[bool] = mapped_column(default=False, server_default="false")
    # The language its screens speak to a user who chose none (None: the browser's).
    locale: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    apps: Mapped[list[App]] = relationship(
        back_populates="connection", order_by="App.name", cascade="all, delete-orphan"
    )
    webhooks: Mapped[list[Webhook]] = relationship(
        back_populates="connection", order_by="Webhook.name", cascade="all, delete-orphan"
    )

    @property
    def safe_url(self) -> str:
        """The URL with its password hidden: the only form a screen, log or API may show."""
        return hide_password(self.url)

    @property
    def zone_name(self) -> str:
        """The venue's zone: the one set, or UTC."""
        return self.zone or DEFAULT_ZONE

    def __repr__(self) -> str:
        return f"<Connection {self.id} {self.name!r} {self.safe_url}>"


class Webhook(db.Model):  # type: ignore[name-defined,misc]
    """A connection's webhook endpoint that automations name: its URL and signing secret
    (Standard Webhooks `whsec_…`), shown once when made, never in a manifest or a log."""

    __tablename__ = "webhooks"
    __table_args__ = (UniqueConstraint("connection_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    connection_id: Mapped[int] = mapped_column(ForeignKey("connections.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(63))
    url: Mapped[str] = mapped_column(String(2000))
    secret: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    connection: Mapped[Connection] = relationship(back_populates="webhooks")

    @property
    def safe_url(self) -> str:
        """The URL with any password or token in it hidden: the only form shown or logged."""
        return hide_password(self.url)

    def __repr__(self) -> str:
        return f"<Webhook {self.id} {self.name!r} on connection {self.connection_id}>"


PARSED: LeastRecent[int, tuple[dict[str, Any], AppManifest]] = LeastRecent(5_000)
"""Each app's parsed manifest by its id, with the manifest it was parsed from (a copy)."""


class App(db.Model):  # type: ignore[name-defined,misc]
    """A manifest that passed the check, saved on a connection."""

    __tablename__ = "apps"
    __table_args__ = (UniqueConstraint("connection_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    connection_id: Mapped[int] = mapped_column(ForeignKey("connections.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(63))
    manifest: Mapped[dict[str, Any]] = mapped_column(JSONB)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    connection: Mapped[Connection] = relationship(back_populates="apps")
    agreement: Mapped[Agreement | None] = relationship(
        back_populates="app", cascade="all, delete-orphan", passive_deletes=True
    )

    @property
    def model(self) -> AppManifest:
        """The manifest as the typed model core/ reads: parsed once per manifest an app
        holds (a screen's layout asks each app's model a few times per request; parsing is
        most of a page's cost), the one kept served while the manifest equals its source."""
        kept = PARSED.get(self.id) if self.id is not None else None
        if kept is not None and kept[0] == self.manifest:
            return kept[1]
        model = load_app(self.manifest)
        if self.id is not None:
            PARSED.put(self.id, (copy.deepcopy(self.manifest), model))
        return model

    @property
    def has_minute_work(self) -> bool:
        """Whether the minute job has work for the app (timed moves, holds to give back,
        reminders): the tick sweeps its connection, the sweep reads it."""
        return has_minute_work(self.model)

    def __repr__(self) -> str:
        return f"<App {self.id} {self.name!r} on connection {self.connection_id}>"


class Agreement(db.Model):  # type: ignore[name-defined,misc]
    """An app's last comparison of its manifest with its tables (`services.agreement`): the
    catalogue's fingerprint it read, the manifest it compared (the app's `updated_at`), and
    each disagreement (kind, table, column, whether it blocks, its sentence and SQL)."""

    __tablename__ = "agreements"

    app_id: Mapped[int] = mapped_column(ForeignKey("apps.id", ondelete="CASCADE"), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(32))
    manifest_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    checked_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    disagreements: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)

    app: Mapped[App] = relationship(back_populates="agreement")

    @property
    def sentences(self) -> list[str]:
        """Each disagreement's sentence, the blocking first."""
        return [str(d["sentence"]) for d in self.disagreements]

    def __repr__(self) -> str:
        return f"<Agreement of app {self.app_id}: {len(self.disagreements)} disagreements>"


class User(db.Model):  # type: ignore[name-defined,misc]
    """A person: email, password hash, API token hash, session version, roles per app."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255))
    token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    # Put in each session at sign-in; raised by sign-out and a new password, which ends
    # every session that carries an older one.
    session_version: Mapped[int] = mapped_column(default=0, server_default="0")
    # The language the screens speak to this person (None: the connection's, the browser's).
    locale: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    roles: Mapped[list[UserRole]] = relationship(
        back_populates="user", cascade="all, delete-orphan", lazy="selectin"
    )

    def roles_in(self, app: App) -> set[str]:
        """The roles this user holds in `app`; `admin` when admin of all apps."""
        return {role.role for role in self.roles if role.app_id is None or role.app_id == app.id}

    def acting_roles(self, app: App) -> frozenset[str]:
        """The roles this user writes with in `app`: an admin holds every role of every app."""
        roles = self.roles_in(app)
        return frozenset(roles | set(app.model.roles) if ADMIN in roles else roles)

    def __repr__(self) -> str:
        return f"<User {self.id} {self.email!r}>"


class UserRole(db.Model):  # type: ignore[name-defined,misc]
    """One role of a user: in one app, or `admin` of every app when `app_id` is empty."""

    __tablename__ = "user_roles"
    __table_args__ = (
        UniqueConstraint("user_id", "app_id", "role", postgresql_nulls_not_distinct=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    app_id: Mapped[int | None] = mapped_column(ForeignKey("apps.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(63))

    user: Mapped[User] = relationship(back_populates="roles")
    app: Mapped[App | None] = relationship()


class ControlVersion(db.Model):  # type: ignore[name-defined,misc]
    """The control plane's version: one row, raised by a trigger on each table above in the
    transaction of every write (migration 0004; `services.control_version`)."""

    __tablename__ = "control_version"
    __table_args__ = (CheckConstraint("id = 1", name="one_row"),)

    id: Mapped[int] = mapped_column(primary_key=True, server_default="1")
    version: Mapped[int] = mapped_column(BigInteger, server_default="0")


def init_app(app: Flask) -> None:
    """Bind `db` to the control-plane database named by the app's DATABASE_URL."""
    url = app.config.get("DATABASE_URL", "")
    if url and not app.config.get("SQLALCHEMY_DATABASE_URI"):
        app.config["SQLALCHEMY_DATABASE_URI"] = sqlalchemy_url(url)
    if app.config.get("SQLALCHEMY_DATABASE_URI"):
        db.init_app(app)
