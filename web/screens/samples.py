"""Add or remove sample data from the connections screen: the app's kept sample set
(`services.samples.add_kept_sample`), or every sample row of one app in one transaction
(`services.samples.remove_sample_data`); either is pushed to the open screens. The app's
setup (settings, opening hours) is never sample data (`core.samples.data.setup_tables`)."""

from __future__ import annotations

import logging
from pathlib import Path

from flask import current_app, render_template, request
from flask_babel import gettext as _
from flask_babel import ngettext
from sqlalchemy.exc import DBAPIError, IntegrityError

from core.basics.errors import AdminiumError
from core.samples.data import sample_keys
from services.apps import app_store
from services.errors import first_line
from services.models import ADMIN, App, User
from services.samples import EXAMPLES, add_kept_sample, kept_sample_due, kept_words, sample_path
from services.samples import remove_sample_data as remove_samples
from web.context import clock, publisher
from web.errors import Forbidden
from web.language import speech
from web.screens.access import require_user, screen_app, screen_blueprint
from web.screens.labels import table_label
from web.screens.writing import Answer, toast

log = logging.getLogger(__name__)

bp = screen_blueprint("samples", __name__)

REMOVERS = frozenset({"manager", ADMIN})
"""The roles in an app that may remove its sample data (an admin of every app may too)."""


def may_remove_sample(user: User, app: App) -> bool:
    """Whether the user holds `manager` or `admin` in the app, or is admin of every app."""
    return bool(REMOVERS & user.roles_in(app))


def removable_apps(user: User, apps: list[App]) -> frozenset[str]:
    """The names of the apps whose sample data the user may remove."""
    return frozenset(app.name for app in apps if may_remove_sample(user, app))


def samples_folder() -> Path:
    """Where the apps' sample sets are kept (SAMPLES_FOLDER, else examples/)."""
    return Path(current_app.config.get("SAMPLES_FOLDER") or EXAMPLES)


def has_sample(app: App) -> bool:
    """Whether the app keeps a sample set to add."""
    return sample_path(app.name, samples_folder()) is not None


@bp.app_template_global()
def sample_removal_words(app: App) -> str:
    """What "Remove sample data" asks before it removes: how many sample rows of which
    tables ("Remove the 3 sample rows of venue (Orders: 2, Tickets: 1)? …"), or that there
    are none."""
    try:
        store = app_store(app)
        with store.engine.connect() as conn:
            keys = sample_keys(conn, app.name)
    except DBAPIError:
        # Its card says the database does not answer; the removal would say so too.
        return _("Remove every sample row of %(app)s? Real rows stay.", app=app.name)
    say = speech()
    counts = {table: len(found) for table, found in sorted(keys.items()) if found}
    if not counts:
        return say(
            "%(app)s has no sample rows now: nothing would be removed. Remove anyway?",
            app=app.name,
        )
    total = sum(counts.values())
    tables = ", ".join(f"{table_label(app.model.tables.get(t), t)}: {n}" for t, n in counts.items())
    return say.plural(
        "Remove the %(num)d sample row of %(app)s (%(tables)s)? It is deleted for good. Real"
        " rows stay, and so do its settings and opening hours.",
        "Remove the %(num)d sample rows of %(app)s (%(tables)s)? They are deleted for good."
        " Real rows stay, and so do its settings and opening hours.",
        total,
        app=app.name,
        tables=tables,
    )


def _sample_app(name: str, app_name: str, verb: str) -> App:
    """The app whose sample data the user adds or removes; 403 without the role."""
    app, _ = screen_app(name, app_name)
    if not may_remove_sample(require_user(), app):
        raise Forbidden(
            f"{verb} sample data needs the manager or admin role in the app",
            {"connection": name, "app": app_name},
        )
    return app


@bp.post("/connections/<name>/apps/<app_name>/sample/add")
def add_sample_data(name: str, app_name: str) -> str:
    """Add the app's kept sample set; answer how many rows it added. When some of its rows
    would be moved at the next sweep (due at once), nothing is added yet: the answer names
    them and asks once more ("Add anyway" sends `confirmed=1`)."""
    app = _sample_app(name, app_name, "adding")
    try:
        if request.form.get("confirmed") != "1":
            now = clock()
            store = app_store(app)
            due = kept_sample_due(store, now=now, folder=samples_folder())
            if due:
                return render_template(
                    "screens/_sample_confirm.html",
                    app=app,
                    due=due,
                    zone=store.zone,
                    connection_name=name,
                )
        added = add_kept_sample(
            app_store(app), now=clock(), publisher=publisher(), folder=samples_folder()
        )
    except AdminiumError as error:
        log.info("sample data of %s/%s not added: %s", name, app_name, error.code)
        return render_template("screens/_sample_added.html", app=app, refused=error, added=None)
    return render_template("screens/_sample_added.html", app=app, refused=None, added=added)


@bp.post("/connections/<name>/apps/<app_name>/sample/remove")
def remove_sample_data(name: str, app_name: str) -> str:
    """Remove every sample row of the app; answer how many rows of each table went."""
    app = _sample_app(name, app_name, "removing")
    try:
        removal = remove_samples(app_store(app), now=clock(), publisher=publisher())
    except IntegrityError as error:
        log.info("sample data of %s/%s not removed: %s", name, app_name, first_line(error))
        return render_template(
            "screens/_sample_removed.html", app=app, refused=first_line(error), removed={}
        )
    except AdminiumError as error:
        log.info("sample data of %s/%s not removed: %s", name, app_name, error.code)
        return render_template(
            "screens/_sample_removed.html", app=app, refused=error.message, removed={}
        )
    total = sum(removal.removed.values())
    answer = render_template(
        "screens/_sample_removed.html",
        app=app,
        removed=removal.removed,
        kept=kept_words(removal),
        total=total,
    )
    said = ngettext(
        "Sample data of %(app)s removed by you: %(num)d row.",
        "Sample data of %(app)s removed by you: %(num)d rows.",
        total,
        app=app.name,
    )
    return answer + toast(Answer(said))
