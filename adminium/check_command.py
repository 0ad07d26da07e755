"""`adminium check FILE`: the manifest check from the command line."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from core.manifest.check import check_manifest_file


@click.command("check")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def check_command(file: Path) -> None:
    """Check an app manifest: print ok, or every refusal as `<where>: <sentence>`."""
    refusals = check_manifest_file(file.read_bytes(), click.format_filename(file))
    if not refusals:
        click.echo("ok")
        return
    for refusal in refusals:
        click.echo(str(refusal))
    sys.exit(1)
