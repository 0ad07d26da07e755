"""`make reset` deletes the embedded servers' folder that ADMINIUM_INSTANCE names (it looked
only at ./instance: with the variable set it exited 0 and deleted nothing, even while
PostgreSQL ran in the moved folder), and refuses while PostgreSQL runs there."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import psutil

from tests.conftest import ROOT


def reset(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ADMINIUM_INSTANCE": str(folder)}
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), "reset"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def instance(folder: Path, postmaster: int | None) -> Path:
    """A folder as `make run` leaves it: pg/ (with a postmaster.pid naming `postmaster`)."""
    (folder / "pg").mkdir(parents=True)
    (folder / "secret_key").write_text("k")
    if postmaster is not None:
        (folder / "pg" / "postmaster.pid").write_text(f"{postmaster}\n/data\n")
    return folder


def test_reset_deletes_the_folder_adminium_instance_names(tmp_path: Path) -> None:
    folder = instance(tmp_path / "moved", postmaster=None)
    done = reset(folder)
    assert done.returncode == 0, done.stderr
    assert not folder.exists()
    assert done.stdout.strip() == f"deleted {folder}"


def test_reset_refuses_while_postgresql_runs_in_the_moved_folder(tmp_path: Path) -> None:
    # A live process stands in for the postmaster: this test's own.
    folder = instance(tmp_path / "moved", postmaster=os.getpid())
    done = reset(folder)
    assert done.returncode != 0
    assert done.stderr.splitlines()[0] == (
        f"PostgreSQL is running on {folder}/pg: stop 'make run' (Ctrl-C) first."
    )
    assert (folder / "secret_key").exists()


def test_reset_after_postgresql_stopped_deletes(tmp_path: Path) -> None:
    gone = max(psutil.pids()) + 100_000  # no process has this pid
    folder = instance(tmp_path / "moved", postmaster=gone)
    assert reset(folder).returncode == 0
    assert not folder.exists()


def test_reset_refuses_a_folder_that_holds_no_instance(tmp_path: Path) -> None:
    # ADMINIUM_INSTANCE mistyped as a folder of something else: nothing of it goes.
    (tmp_path / "notes.txt").write_text("keep me")
    done = reset(tmp_path)
    assert done.returncode != 0
    assert "holds no embedded server's data" in done.stderr
    assert (tmp_path / "notes.txt").read_text() == "keep me"
