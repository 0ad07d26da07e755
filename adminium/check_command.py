"""`adminium check FILE`: the manifest check from the command line."""

from __future__ import annotations

from pathlib import Path

import click

from adminium.refusals import Refused
from core.manifest.check import check_manifest_file


@click.command("check")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def check_command(file: Path) -> None:
    """Check an app manifest: print ok, or refuse it, each sentence as `<where>: <sentence>`."""
    name = click.format_filename(file)
    refusals = check_manifest_file(file.read_bytes(), name)
    if not refusals:
        click.echo("ok")
        return
    raise Refused(
        f"the manifest check refused {name}", "MANIFEST_REFUSED", [str(r) for r in refusals]
    )
