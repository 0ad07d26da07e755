"""The product's own webhook receiver, for the demo: nothing outside is needed to see an
automation's event arrive, signed.

`make run` points the demo's `kitchen` webhook at `/receiver/<connection>/<webhook>` on
the web's own port. A call is verified with that webhook's secret as any receiver
would (`standardwebhooks`: the signature, and a timestamp within five minutes); a
verified call is kept, the newest 50 per connection, in Redis; a call that fails is
answered 401 and not kept, so nobody without the secret can write to the managers'
"Recent webhook calls" view. A call to a connection or webhook that does not exist is
answered the same 401, after the same verification (against a secret nobody holds), so the
receiver never says which names exist.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis
from sqlalchemy.orm import Session
from standardwebhooks.webhooks import Webhook as Verifier
from standardwebhooks.webhooks import WebhookVerificationError

from services.errors import NotFound
from services.models import Webhook
from services.webhooks import get_webhook

log = logging.getLogger(__name__)

KEPT = 50
"""The newest calls kept per connection."""
BODY_SHOWN = 4000
"""How much of a call's body is kept (an event larger than that is cut for showing)."""


NOBODY_S_SECRET = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
"""What a call to a webhook that does not exist is verified against (and so refused by)."""


def calls_key(connection: str) -> str:
    """The Redis list of a connection's recent verified calls, newest first."""
    return f"adminium:receiver:{connection}"


@dataclass(frozen=True)
class Call:
    """One verified call as the view lists it."""

    at: datetime
    webhook: str
    webhook_id: str
    event: Any
    body: str


def receive_named(
    session: Session,
    client: redis.Redis | None,
    connection: str,
    name: str,
    body: bytes,
    headers: Mapping[str, str],
    now: datetime,
) -> bool:
    """A call to `/receiver/<connection>/<name>`: verified and kept as `receive` does; False,
    after the same verification, when there is no such connection or webhook."""
    try:
        webhook = get_webhook(session, connection, name)
    except NotFound:
        with contextlib.suppress(WebhookVerificationError, ValueError):
            Verifier(NOBODY_S_SECRET).verify(body, dict(headers))
        log.warning("receiver %s/%s: call refused (no such webhook)", connection, name)
        return False
    return receive(client, webhook, body, headers, now)


def receive(
    client: redis.Redis | None,
    webhook: Webhook,
    body: bytes,
    headers: Mapping[str, str],
    now: datetime,
) -> bool:
    """Verify one call with the webhook's secret and keep it; False (kept nowhere) when the
    signature or its time does not hold."""
    connection = webhook.connection.name
    try:
        event = Verifier(webhook.secret).verify(body, dict(headers))
    except (WebhookVerificationError, ValueError) as error:
        log.warning("receiver %s/%s: call refused (%s)", connection, webhook.name, error)
        return False
    entry = {
        "at": now.isoformat(),
        "webhook": webhook.name,
        "webhook_id": headers.get("webhook-id", ""),
        "event": event,
        "body": body.decode(errors="replace")[:BODY_SHOWN],
    }
    if client is not None:
        with client.pipeline() as pipe:
            pipe.lpush(calls_key(connection), json.dumps(entry))
            pipe.ltrim(calls_key(connection), 0, KEPT - 1)
            pipe.execute()
    log.info("receiver %s/%s: call %s verified", connection, webhook.name, entry["webhook_id"])
    return True


def recent_calls(client: redis.Redis | None, connection: str) -> list[Call]:
    """A connection's recent verified calls, newest first."""
    if client is None:
        return []
    found = []
    for raw in client.lrange(calls_key(connection), 0, KEPT - 1):
        entry = json.loads(raw)
        found.append(
            Call(
                datetime.fromisoformat(entry["at"]),
                entry["webhook"],
                entry["webhook_id"],
                entry["event"],
                entry["body"],
            )
        )
    return found
