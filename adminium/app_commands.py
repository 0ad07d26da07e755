"""Console commands for apps: `app add` (a manifest compared with the tables, their
migration, the preview of a replace), `app diff` (what disagrees, and the plan), `app
draft` (a manifest from the database's catalogue), `app list` and `app remove`."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from adminium.control_commands import INSTANT, control_plane, read_json
from adminium.preview_commands import print_preview
from adminium.refusals import Refused
from core.agreement.compare import Comparison, Renames
from services import apps
from services.agreement import Asked, compare_app, parse_renames, record_comparison, saved_app
from services.app_roster import list_apps, remove_app
from services.connections import get_connection
from services.drafts import draft_app, manifest_text
from services.errors import InvalidValue
from services.preview import AT_ONCE_LIMIT, ReplacePreview, connection_zone, preview_replace

RENAME_HELP = (
    "TABLE.OLD=NEW renames a column, TABLE.COLUMN.OLD=NEW a value its rows hold (with "
    "--migrate and --yes); repeat it for more."
)


@click.group("app")
def app_group() -> None:
    """Apps: checked manifests on a connection."""


def renames_option(ctx: click.Context, param: click.Parameter, texts: tuple[str, ...]) -> Renames:
    """`--rename` read as the renames it asks for (a usage error names the option)."""
    try:
        return parse_renames(texts)
    except InvalidValue as error:
        raise click.BadParameter(error.message, ctx=ctx, param=param) from None


def read_manifest(file: Path) -> dict[str, Any]:
    """A manifest file's JSON object."""
    manifest = read_json(file)
    if not isinstance(manifest, dict):
        raise Refused(f"{file} holds no manifest: a JSON object is expected", "INVALID_VALUE")
    return manifest


@app_group.command("add")
@click.argument("connection")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--create-tables",
    is_flag=True,
    help="Make the tables the database lacks, their indexes and Adminium's schema.",
)
@click.option("--replace", is_flag=True, help="Replace the connection's app of the same name.")
@click.option(
    "--migrate",
    is_flag=True,
    help="Make the tables Adminium made agree with the manifest (the plan of `app diff`).",
)
@click.option("--rename", "renames", multiple=True, callback=renames_option, help=RENAME_HELP)
@click.option(
    "--preview", is_flag=True, help="Print what the clock would do differently; save nothing."
)
@click.option("--at", "at", type=INSTANT, default=None, help="The preview's instant (ISO, offset).")
@click.option(
    "--yes",
    is_flag=True,
    help="Replace even when many rows become due at once; make the destructive steps.",
)
def app_add(
    connection: str,
    file: Path,
    create_tables: bool,
    replace: bool,
    migrate: bool,
    renames: Renames,
    preview: bool,
    at: datetime | None,
    yes: bool,
) -> None:
    """Check a manifest, compare it with the tables, and save it as an app of CONNECTION."""
    manifest = read_manifest(file)
    with control_plane() as session:
        asked = Asked(create_tables, migrate, yes, renames)
        current = apps.lookup_app(session, connection, str(manifest.get("name", "")))
        # A replace is previewed first: more than a handful due at once needs --yes.
        if preview or (replace and current is not None and not yes):
            now = at or datetime.now(UTC)
            found = preview_replace(session, connection, manifest, now=now, asked=asked)
            zone = connection_zone(session, connection)
            if preview:
                print_replace_preview(found, zone)
                return
            if found.preview is None:
                print_replace_preview(found, zone)
                raise Refused(
                    f"not replaced: no preview ({found.unread}): run again with --yes to "
                    "replace without one",
                    "DATABASE_REFUSED",
                )
            if len(found.preview.due_at_once) > AT_ONCE_LIMIT:
                print_replace_preview(found, zone)
                raise Refused(
                    f"not replaced: {len(found.preview.due_at_once)} rows would be due at once "
                    f"(more than {AT_ONCE_LIMIT}); run again with --yes to replace",
                    "CONTROL_PLANE_REFUSED",
                )
            session.rollback()
        added = apps.install_manifest(
            session,
            connection,
            manifest,
            replace=replace,
            create_tables=create_tables,
            migrate=migrate,
            yes=yes,
            renames=asked.renames,
        )
        tables = ", ".join(added.app.model.tables)
        made = ""
        if added.ran:
            made = f" (tables migrated: {len(added.ran)} steps)" if migrate else " (tables made)"
        click.echo(f"app {added.app.name} saved on connection {connection}: {tables}{made}")
        print_disagreements(added.after, saying="still")
        for missing in added.lacking:
            click.echo(f"  {missing.words}")


def print_replace_preview(found: ReplacePreview, zone: Any) -> None:
    """The migration a replace's preview ran (rolled back), what still disagrees, and the
    preview (or why there is none)."""
    if found.migration:
        click.echo(f"-- migrated inside the preview, then rolled back ({len(found.migration)}):")
        for step in found.migration:
            click.echo(step.sql)
    print_disagreements(found.comparison, saying="now")
    if found.preview is None:
        click.echo(f"no preview: {found.unread}")
    else:
        print_preview(found.preview, zone)


def print_disagreements(comparison: Comparison, *, saying: str) -> None:
    """The disagreements the tables serve with (a length, an index, rows hidden …)."""
    left = [d for d in comparison.disagreements if not d.blocks]
    if not left:
        return
    click.echo(f"{saying}: tables disagree with the manifest: {len(left)}")
    for disagreement in left:
        click.echo(f"  {disagreement.sentence}")


@app_group.command("diff")
@click.argument("connection")
@click.argument("app", required=False)
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--rename", "renames", multiple=True, callback=renames_option, help=RENAME_HELP)
@click.option("--sql", "sql_only", is_flag=True, help="Print the plan's SQL only (for psql).")
def app_diff(
    connection: str, app: str | None, file: Path | None, renames: Renames, sql_only: bool
) -> None:
    """What disagrees between an app's manifest (saved, or FILE's) and CONNECTION's tables,
    and the plan that makes them agree. Exits 0 when they agree, 1 when not."""
    if file is None and app is not None and Path(app).is_file():
        app, file = None, Path(app)  # `app diff CONN FILE`
    manifest = read_manifest(file) if file is not None else None
    with control_plane() as session:
        if manifest is not None and app is not None and manifest.get("name") != app:
            raise Refused(
                f"{file} is the manifest of {manifest.get('name')!r}, not {app!r}", "INVALID_VALUE"
            )
        found = compare_app(session, connection, app, manifest, renames=renames)
        if manifest is None:
            # The saved manifest's comparison is the one the screens show.
            saved = saved_app(session, get_connection(session, connection), app)
            record_comparison(session, saved, found, datetime.now(UTC))
            session.commit()
    print_diff(found, connection, sql_only=sql_only)
    if not found.agree:
        raise click.exceptions.Exit(1)


def print_diff(found: Comparison, connection: str, *, sql_only: bool) -> None:
    """Each disagreement's sentence, then the plan: what `--migrate` runs on the tables
    Adminium made, and the SQL for the venue's DBA."""
    verdict = found.verdict(yes=True)
    if sql_only:
        for step in found.steps:
            click.echo(step.sql)
        return
    if found.agree:
        click.echo(
            f"app {found.app} on connection {connection}: the tables agree with the manifest"
        )
        return
    click.echo(
        f"app {found.app} on connection {connection}: tables disagree with the manifest: "
        f"{len(found.disagreements)}"
    )
    for sentence in found.sentences():
        click.echo(f"  {sentence}")
    for note in found.unused:
        click.echo(f"  {note}")
    run = [s for s in found.steps if s.ours]
    if run:
        click.echo("-- the plan, on tables Adminium made (app add --replace --migrate runs it):")
        for step in run:
            marks = [*(["destructive: --yes"] if step.destructive else [])]
            marks += [f"refused while {step.breaks}"] if step.breaks else []
            click.echo(step.sql + (f"  -- {'; '.join(marks)}" if marks else ""))
    if verdict.left:
        click.echo("-- for the venue's DBA (tables, columns or CHECKs Adminium did not make):")
        for step in verdict.left:
            click.echo(step.sql)


@app_group.command("draft")
@click.argument("connection")
@click.option("--schema", default="public", show_default=True, help="The schema to draft.")
@click.option("--table", "tables", multiple=True, help="Draft this table only; repeat it for more.")
@click.option("--name", default=None, help="The app's name (default: the schema's).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the manifest to this file instead of stdout.",
)
def app_draft(
    connection: str, schema: str, tables: tuple[str, ...], name: str | None, output: Path | None
) -> None:
    """Draft a manifest from CONNECTION's tables: columns, types, keys, links and a guessed
    state column. The JSON goes to stdout (or -o FILE); what is still to write goes to
    stderr, as the manifest check's sentences."""
    with control_plane() as session:
        drafted = draft_app(session, connection, schema=schema, tables=tables, name=name)
    text = manifest_text(drafted.manifest) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"drafted app {drafted.manifest['name']} into {output}", err=True)
    click.echo("still to write before app add:", err=True)
    for line in drafted.lines:
        click.echo(f"  {line}", err=True)


@app_group.command("list")
@click.argument("connection", required=False)
def app_list(connection: str | None) -> None:
    """Each app (of CONNECTION, or of every connection), its tables, and whether they agree
    with its manifest."""
    with control_plane() as session:
        found = list_apps(session, connection, now=datetime.now(UTC))
    if not found:
        click.echo("no apps yet: adminium app add CONNECTION FILE")
    for listed in found:
        tables = ", ".join(listed.tables)
        click.echo(f"{listed.connection}/{listed.app}\t{tables}\t{listed.agreement}")


@app_group.command("remove")
@click.argument("connection")
@click.argument("app")
@click.option(
    "--drop-tables",
    is_flag=True,
    help="Drop the app's tables Adminium made, and their rows (needs --yes).",
)
@click.option("--yes", is_flag=True, help="Drop them: --drop-tables asks for it.")
def app_remove(connection: str, app: str, drop_tables: bool, yes: bool) -> None:
    """Forget APP of CONNECTION (its manifest, its users' roles in it, its set-aside
    records). Its tables stay, unless --drop-tables --yes drops those Adminium made."""
    with control_plane() as session:
        removed = remove_app(session, connection, app, drop_tables=drop_tables, yes=yes)
    click.echo(f"app {removed.app} removed from connection {removed.connection}")
    if removed.unreached:
        click.echo(
            f"  its database did not answer ({removed.unreached}): its set-aside records "
            "there are left as they are"
        )
    if removed.dropped:
        click.echo(f"  tables dropped: {', '.join(removed.dropped)}")
    if removed.kept:
        why = " (Adminium did not make them)" if drop_tables else ""
        click.echo(f"  tables kept: {', '.join(removed.kept)}{why}")
