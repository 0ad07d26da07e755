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

Invoke = Callable[..., Result]
URL = "https://kitchen:pa55word@screens.example/hooks?token=t0ken&screen=2"


@pytest.fixture
def invoke(make_database: Callable[[], str]) -> Invoke:
    """`adminium …` on a fresh control plane holding a connection `venue`."""
    runner = CliRunner()
    env = {"DATABASE_URL": make_database(), "REDIS_URL": ""}

    def run(*args: str) -> Result:
        return runner.invoke(main, list(args), env=env)

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
