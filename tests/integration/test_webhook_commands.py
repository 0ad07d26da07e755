"""`adminium webhook add|list|remove`: the secret shown once in the Standard Webhooks form,
never listed or logged; credentials in a URL hidden; refusals in one line."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner, Result
from standardwebhooks.webhooks import Webhook

from adminium.cli import main
from services.webhooks import ALLOW_PRIVATE

Invoke = Callable[..., Result]
URL = "https://kitchen:pa55word@screens.example/hooks?token=t0ken&screen=2"


@pytest.fixture
def invoke(make_database: Callable[[], str]) -> Invoke:
    """`adminium …` on a fresh control plane holding a connection `venue`."""
    runner = CliRunner()
    # Webhooks post to public addresses only, unless a test allows private ones itself.
    env: dict[str, str | None] = {
        "DATABASE_URL": make_database(),
        "REDIS_URL": "",
        ALLOW_PRIVATE: None,
    }

    def run(*args: str, **extra: str) -> Result:
        return runner.invoke(main, list(args), env={**env, **extra})

    added = run("connection", "add", "venue", "--url", make_database())
    assert added.exit_code == 0, added.output
    return run


def test_add_shows_the_secret_once_and_list_never(
    invoke: Invoke, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    added = invoke("webhook", "add", "venue", "kitchen", URL)
    assert added.exit_code == 0, added.output
    secret = added.output.rpartition(": ")[2].strip()
    # The Standard Webhooks form: whsec_ and 32 random bytes in base64, which signs.
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert Webhook(secret).sign("msg_1", datetime.now(UTC), "{}").startswith("v1,")
    listed = invoke("webhook", "list", "venue")
    assert listed.exit_code == 0, listed.output
    assert listed.output == (
        "kitchen\thttps://kitchen:***@screens.example/hooks?token=***&screen=***\n"
    )
    for text in (listed.output, caplog.text):
        assert secret not in text
    for credential in ("pa55word", "t0ken"):
        assert credential not in added.output + listed.output + caplog.text


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        (
            ("webhook", "add", "venue", "kitchen", "ftp://screens.example/"),
            "the URL is no web address: write https://host/path (http:// for this machine)",
        ),
        (
            ("webhook", "add", "venue", "Kitchen", URL),
            "'Kitchen' is no webhook name: use lower-case letters, digits and _ as the"
            ' manifest\'s "webhook" names it',
        ),
        (
            ("webhook", "add", "nowhere", "kitchen", URL),
            "no connection named 'nowhere'",
        ),
        (
            ("webhook", "remove", "venue", "till"),
            "connection 'venue' has no webhook named 'till'",
        ),
    ],
    ids=["not_http", "not_a_name", "no_connection", "remove_unknown"],
)
def test_refusals_are_one_line(invoke: Invoke, args: tuple[str, ...], refusal: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 1
    assert refusal in result.output


def test_a_second_webhook_of_one_name_is_refused_and_remove_frees_it(invoke: Invoke) -> None:
    assert invoke("webhook", "add", "venue", "kitchen", URL).exit_code == 0
    again = invoke("webhook", "add", "venue", "kitchen", URL)
    assert again.exit_code == 1
    assert "connection 'venue' already has a webhook named 'kitchen'" in again.output
    removed = invoke("webhook", "remove", "venue", "kitchen")
    assert removed.output == "webhook kitchen removed from connection venue\n"
    assert invoke("webhook", "list", "venue").output.startswith("no webhooks yet")
    assert invoke("webhook", "add", "venue", "kitchen", URL).exit_code == 0


REFUSED_HOSTS = [
    ("http://127.0.0.1:8080/hooks", "127.0.0.1 is a loopback address"),
    ("http://localhost:8080/hooks", "localhost (it resolves to 127.0.0.1) is a loopback address"),
    ("http://[::1]/hooks", "::1 is a loopback address"),
    ("http://[::ffff:127.0.0.1]/hooks", "127.0.0.1 is a loopback address"),
    ("http://0.0.0.0/hooks", "0.0.0.0 is an unspecified address"),
    ("http://169.254.169.254/latest/meta-data", "169.254.169.254 is a link-local address"),
    ("https://10.20.0.5/hooks", "10.20.0.5 is a private address"),
    ("https://192.168.1.10/hooks", "192.168.1.10 is a private address"),
    ("https://100.64.0.1/hooks", "100.64.0.1 is not a public address"),
]


def test_add_refuses_a_loopback_private_or_link_local_address_unless_allowed(
    invoke: Invoke,
) -> None:
    for url, where in REFUSED_HOSTS:
        refused = invoke("webhook", "add", "venue", "kitchen", url)
        assert refused.exit_code == 1, (url, refused.output)
        assert refused.output == (
            f"Error: the webhook's host {where}: webhooks post to public addresses only,"
            f" unless {ALLOW_PRIVATE}=1 allows the machine's own networks (INVALID_VALUE)\n"
        ), url
    assert invoke("webhook", "list", "venue").output.startswith("no webhooks yet")
    # The operator's word lets one through.
    allowed = invoke(
        "webhook", "add", "venue", "kitchen", REFUSED_HOSTS[1][0], **{ALLOW_PRIVATE: "1"}
    )
    assert allowed.exit_code == 0, allowed.output
    # A host that does not resolve now is added, with a note: each POST looks it up again.
    later = invoke("webhook", "add", "venue", "till", "https://till.invalid/hooks")
    assert later.exit_code == 0, later.output
    assert (
        "note: till.invalid does not resolve now: each delivery looks it up again" in later.output
    )
