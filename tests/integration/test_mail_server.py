"""The Procfile's `mail` process: a real SMTP server keeping what it receives in the instance
folder's maildir, stopped by SIGTERM; idle (and still running) when SMTP_URL is the user's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path

from services.smtp import connect
from tests.integration.outbox_fixtures import free_port


def start(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "adminium.mail_server"], env={**os.environ, **env}
    )


def test_the_embedded_server_keeps_each_email_in_the_maildir(tmp_path: Path) -> None:
    port = free_port()
    folder = tmp_path / "mail"
    process = start({"EMBEDDED_SMTP_PORT": str(port), "EMBEDDED_SMTP_FOLDER": str(folder)})
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                smtp = connect(f"smtp://127.0.0.1:{port}")
                break
            except OSError:
                assert time.monotonic() < deadline, "the mail process never listened"
                time.sleep(0.1)
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = "a@x.test", "b@y.test", "Hello"
        message.set_content("Kept in the maildir.")
        smtp.send_message(message)
        smtp.quit()
        [kept] = list((folder / "new").iterdir())
        assert "Subject: Hello" in kept.read_text()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0


def catches(pid: int, signum: int) -> bool:
    """Whether the process has a handler of its own for `signum` (its SigCgt mask)."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask, 16) & (1 << (signum - 1)))


def test_without_an_embedded_port_it_waits_for_the_stop_signal() -> None:
    process = start({"EMBEDDED_SMTP_PORT": ""})
    # Ready once it catches SIGTERM (a loaded machine takes seconds to import it): a signal
    # sent before then would end it with -15, whatever the process does with it later.
    deadline = time.monotonic() + 30
    while not catches(process.pid, signal.SIGTERM):
        assert process.poll() is None, "the mail process exited before it was ready"
        assert time.monotonic() < deadline, "the mail process never caught SIGTERM"
        time.sleep(0.05)
    assert process.poll() is None  # not exited, so not restarted again and again
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 0
