"""The Procfile's `mail` process: the embedded SMTP server (aiosmtpd) of a local run.

`adminium run` without SMTP_URL picks a free local port, names it in EMBEDDED_SMTP_PORT
and points SMTP_URL at it; this process then keeps every email it receives in the
instance folder's maildir (`instance/mail/new`, one file per email, readable with any
mail reader or `cat`). With SMTP_URL set by hand there is nothing to serve: the process
waits quietly for the stop signal, so the supervisor does not start it again and again.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from pathlib import Path
from types import FrameType

from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox

log = logging.getLogger(__name__)

PORT_VARIABLE = "EMBEDDED_SMTP_PORT"
FOLDER_VARIABLE = "EMBEDDED_SMTP_FOLDER"


def serve(folder: Path, port: int, stop: threading.Event) -> None:
    """Receive mail on 127.0.0.1:`port` into the maildir at `folder` until `stop` is set."""
    # A maildir's three folders (Maildir makes them only for a folder that is not there yet).
    for part in ("tmp", "new", "cur"):
        (folder / part).mkdir(parents=True, exist_ok=True)
    controller = Controller(Mailbox(str(folder)), hostname="127.0.0.1", port=port)
    controller.start()
    log.warning("embedded SMTP server on 127.0.0.1:%s keeps its mail in %s/new", port, folder)
    try:
        stop.wait()
    finally:
        controller.stop()


def main() -> None:
    """Serve the embedded SMTP server named by the environment, or wait for the stop signal."""
    logging.basicConfig(level=logging.WARNING, format="mail: %(message)s")
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, request_stop)
    port = os.environ.get(PORT_VARIABLE)
    if not port:
        stop.wait()
        return
    serve(Path(os.environ[FOLDER_VARIABLE]), int(port), stop)


if __name__ == "__main__":
    main()
