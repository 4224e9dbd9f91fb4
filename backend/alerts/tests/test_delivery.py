"""Delivery through real receivers: aiosmtpd for email, local HTTP servers for Slack and
webhooks; signatures checked by the standardwebhooks package, as a customer would."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.test import override_settings
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from alerts.choices import DeliveryStatus
from alerts.models import Channel, Delivery, Incident
from alerts.services import delivery as outbox
from alerts.services.evaluate import evaluate
from alerts.tests.helpers import T0, channel, finding, later
from alerts.tests.receivers import HttpReceiver, Reply, smtp_server
from alerts.transports import base, email, slack
from analysis.models import Finding
from fathom.testing import FathomTestCase

SECRET = "whsec_" + "QUFB" * 11


def fire(test: FathomTestCase) -> Incident:
    finding(test.athens, test.frankfurt)
    evaluate(T0)
    evaluate(later(31))
    return Incident.objects.get()


@override_settings(ALERT_GROUP_WAIT_S=30, ALERT_GROUP_INTERVAL_S=300)
class WebhookDeliveryTests(FathomTestCase):
    def test_the_signature_verifies_and_the_id_survives_retries(self) -> None:
        with HttpReceiver(Reply(503, "busy"), Reply(200)) as receiver:
            channel("webhook", url=receiver.url, secret=SECRET)
            fire(self)
            row = Delivery.objects.get()
            first = outbox.deliver(row.pk)
            assert first.status == "retrying" and first.retry_in_s is not None
            assert outbox.deliver(row.pk).status == "not_due", "the retry waits for its time"
            Delivery.objects.filter(pk=row.pk).update(next_attempt_at=timezone.now())
            assert outbox.deliver(row.pk).status == "sent"
        one, two = receiver.received
        assert one.headers["webhook-id"] == two.headers["webhook-id"] == f"msg_{row.key}"
        verifier = Webhook(SECRET)
        payload = verifier.verify(two.body, two.headers)
        assert payload["type"] == "incident.firing"
        assert payload["data"]["firing"][0]["path"] == "athens->frankfurt"
        tampered = two.body.replace(b"athens", b"athenz")
        with pytest.raises(WebhookVerificationError):
            verifier.verify(tampered, two.headers)
        old = {**two.headers, "webhook-timestamp": str(int(two.headers["webhook-timestamp"]) - 360)}
        with pytest.raises(WebhookVerificationError):
            verifier.verify(two.body, old)
        row.refresh_from_db()
        assert row.status == DeliveryStatus.SENT and row.attempt_log.count() == 2
        assert [a.status_code for a in row.attempt_log.all()] == [503, 200]

    def test_429_retry_after_is_honoured(self) -> None:
        with HttpReceiver(Reply(429, "slow down", {"Retry-After": "120"})) as receiver:
            channel("webhook", url=receiver.url, secret=SECRET)
            fire(self)
            outcome = outbox.deliver(Delivery.objects.get().pk)
        assert outcome.status == "retrying" and outcome.retry_in_s is not None and outcome.retry_in_s >= 120
        assert Channel.objects.get().next_send_at is not None

    def test_a_retry_after_holds_a_channel_an_hour_at_most_and_an_edit_lifts_it(self) -> None:
        """A receiver's "inf" once crashed the delivery task (timedelta overflow) and a year's
        Retry-After held the channel a year, shown as enabled."""
        years_ahead = "Fri, 01 Jan 2100 00:00:00 GMT"
        no_zone = "Fri, 01 Jan 2100 00:00:00 -0000"  # parsed without a zone: GMT, as RFC 9110 says
        for header in ("inf", "999999999", years_ahead, no_zone):
            Channel.objects.all().delete()
            Incident.objects.all().delete()
            Finding.objects.all().delete()
            with HttpReceiver(Reply(429, "slow down", {"Retry-After": header})) as receiver:
                channel("webhook", url=receiver.url, secret=SECRET)
                fire(self)
                outcome = outbox.deliver(Delivery.objects.get().pk)
            assert outcome.status == "retrying" and outcome.retry_in_s is not None, header
            assert outcome.retry_in_s <= base.MAX_RETRY_AFTER_S, (header, outcome)
            held = Channel.objects.get().next_send_at
            if header != "inf":  # not a number of seconds: the backoff alone decides
                assert held is not None and held <= timezone.now() + timedelta(seconds=base.MAX_RETRY_AFTER_S + 5)
        hook = Channel.objects.get()
        self.client.force_login(self.owner)
        listed = self.client.get(f"/api/v1/alerts/channels/{hook.pk}/").json()
        assert listed["held_until"] is not None, listed
        edited = self.client.patch(f"/api/v1/alerts/channels/{hook.pk}/", {"send_resolved": False}, format="json")
        assert edited.status_code == 200 and edited.json()["held_until"] is None, edited.json()
        assert Delivery.objects.get().next_attempt_at <= timezone.now(), "its waiting delivery is due again"

    def test_410_disables_the_channel_and_says_why(self) -> None:
        with HttpReceiver(Reply(410, "gone")) as receiver:
            channel("webhook", url=receiver.url, secret=SECRET)
            fire(self)
            assert outbox.deliver(Delivery.objects.get().pk).status == "failed"
        hook = Channel.objects.get()
        assert not hook.enabled and "HTTP 410 Gone" in hook.disabled_reason

    def test_a_redirect_is_a_failure_not_followed(self) -> None:
        with HttpReceiver(Reply(301, "", {"Location": "http://127.0.0.1:9/elsewhere"})) as receiver:
            channel("webhook", url=receiver.url, secret=SECRET)
            fire(self)
            assert outbox.deliver(Delivery.objects.get().pk).status == "failed"
        assert len(receiver.received) == 1 and "redirect" in Channel.objects.get().disabled_reason

    def test_a_slow_receiver_times_out_and_is_retried(self) -> None:
        with HttpReceiver(Reply(200, delay_s=2)) as receiver, mock.patch("alerts.transports.base.HTTP_TIMEOUT_S", 0.5):
            channel("webhook", url=receiver.url, secret=SECRET)
            fire(self)
            outcome = outbox.deliver(Delivery.objects.get().pk)
        assert outcome.status == "retrying"
        assert "within" in Delivery.objects.get().last_error or "timed out" in Delivery.objects.get().last_error

    def test_an_unresolvable_host_is_a_clear_retried_error(self) -> None:
        channel("webhook", url="http://fathom-receiver.invalid/hook", secret=SECRET)
        fire(self)
        assert outbox.deliver(Delivery.objects.get().pk).status == "retrying"
        assert "does not resolve" in Delivery.objects.get().last_error

    def test_a_worker_killed_mid_send_is_sent_again_with_the_same_id(self) -> None:
        with HttpReceiver(Reply(200)) as receiver:
            channel("webhook", url=receiver.url, secret=SECRET)
            fire(self)
            row = Delivery.objects.get()
            # The worker marked it sending and died before recording the outcome.
            Delivery.objects.filter(pk=row.pk).update(status=DeliveryStatus.SENDING, sending_since=timezone.now())
            assert outbox.due(timezone.now()) == []
            assert outbox.deliver(row.pk).status == "nothing", "a live sender is not doubled"
            stale = timezone.now() + outbox.stale_after() + timedelta(seconds=1)
            assert outbox.due(stale) == [row.pk]
            assert outbox.deliver(row.pk, now=stale).status == "sent"
            assert outbox.deliver(row.pk, now=stale).status == "nothing", "sent once"
        assert [r.headers["webhook-id"] for r in receiver.received] == [f"msg_{row.key}"]


@override_settings(ALERT_GROUP_WAIT_S=30)
class SlackDeliveryTests(FathomTestCase):
    def test_block_kit_within_limits_and_names_escaped(self) -> None:
        self.athens.name = "<!channel> & co"
        self.athens.save()
        with HttpReceiver(Reply(200)) as receiver:
            channel("slack", url=receiver.url)
            fire(self)
            assert outbox.deliver(Delivery.objects.get().pk).status == "sent"
        body = json.loads(receiver.received[0].body)
        assert body["text"].startswith("New incident: Throughput down 40%")
        kinds = [b["type"] for b in body["blocks"]]
        assert kinds[0] == "header" and kinds[-2:] == ["context", "actions"]
        text = json.dumps(body["blocks"][2])
        assert "&lt;!channel&gt; &amp; co" in text and "<!channel>" not in text
        assert body["blocks"][-1]["elements"][0]["url"].endswith(f"/incidents/{Incident.objects.get().pk}")

    def test_every_transport_says_where_the_degraded_paths_meet(self) -> None:
        alert: dict[str, Any] = {
            "summary": "Throughput down 40% on a->b", "rule": "r", "severity": "warning", "url": None, "advice": "",
            "started_at": T0.isoformat(), "evidence": {},
        }  # fmt: skip
        message = {
            "kind": "firing", "headline": "New incident", "title": "2 throughput alerts, all through hop 198.18.9.9",
            "cause": "hop 198.18.9.9 is on both degraded paths & on no path that measured normally",
            "changes": "", "acknowledged_by": None, "firing": [alert, alert], "resolved": [], "incident_id": 1,
            "severity": "warning", "opened_at": T0.isoformat(), "url": "http://x/incidents/1",
        }  # fmt: skip
        assert f"Where: {message['cause']}" in email.text_body(message)
        assert "Where: hop 198.18.9.9 is on both degraded paths &amp; on no path" in email.html_body(message)
        assert "*Where:* hop 198.18.9.9 is on both degraded paths &amp; on no path" in json.dumps(slack.blocks(message))
        assert "Where:" not in email.text_body({**message, "cause": ""})

    def test_long_messages_are_cut_to_slacks_limits(self) -> None:
        alert: dict[str, Any] = {
            "summary": "x" * 5000, "rule": "r", "severity": "warning", "url": None, "advice": "",
        }  # fmt: skip
        message = {
            "kind": "firing", "headline": "New incident", "title": "t" * 400, "changes": "", "acknowledged_by": None,
            "firing": [alert] * 30, "resolved": [], "incident_id": 1, "severity": "warning", "opened_at": "now",
            "url": "http://x/incidents/1",
        }  # fmt: skip
        body = slack.blocks(message)
        assert len(body["blocks"]) <= 50
        assert len(body["blocks"][0]["text"]["text"]) <= 150
        assert all(len(b.get("text", {}).get("text", "")) <= 3000 for b in body["blocks"])
        assert "and 20 more alerts" in json.dumps(body)

    def test_slack_404_and_no_service_disable_the_channel(self) -> None:
        for reply in (Reply(404, "channel_not_found"), Reply(400, "no_service")):
            Channel.objects.all().delete()
            Incident.objects.all().delete()
            Finding.objects.all().delete()
            with HttpReceiver(reply) as receiver:
                channel("slack", url=receiver.url)
                finding_id = fire(self).pk
                assert outbox.deliver(Delivery.objects.get(incident_id=finding_id).pk).status == "failed"
            assert not Channel.objects.get().enabled

    def test_one_message_per_second_per_webhook(self) -> None:
        with HttpReceiver(Reply(200)) as receiver:
            channel("slack", url=receiver.url)
            fire(self)
            first = Delivery.objects.get()
            second = Delivery.objects.create(
                incident=first.incident, channel=first.channel, sequence=2, kind="update", message=first.message
            )
            now = timezone.now()
            assert outbox.deliver(first.pk, now=now).status == "sent"
            limited = outbox.deliver(second.pk, now=now + timedelta(milliseconds=200))
            assert (
                limited.status == "rate_limited" and limited.retry_in_s is not None and 0.7 < limited.retry_in_s <= 0.8
            )
            assert outbox.deliver(second.pk, now=now + timedelta(seconds=1)).status == "sent"
        assert len(receiver.received) == 2


@override_settings(ALERT_GROUP_WAIT_S=30, ALERT_GROUP_INTERVAL_S=300, ALERT_EMAIL_DOMAIN="fathom.test")
class EmailDeliveryTests(FathomTestCase):
    def test_multipart_threaded_messages_through_a_real_smtp_server(self) -> None:
        with smtp_server() as (server, port), override_settings(EMAIL_HOST="127.0.0.1", EMAIL_PORT=port):
            channel("email", to=["noc@example.org"])
            found = finding(self.athens, self.frankfurt)
            evaluate(T0)
            evaluate(later(31))
            found.state = "cleared"
            found.save()
            evaluate(later(31 + 1800))
            for row in Delivery.objects.order_by("sequence"):
                assert outbox.deliver(row.pk).status == "sent"
        first, resolved = server.messages
        incident = Incident.objects.get()
        assert first["Message-ID"] == f"<incident-{incident.pk}@fathom.test>"
        assert resolved["In-Reply-To"] == resolved["References"] == first["Message-ID"]
        assert first["Subject"] == resolved["Subject"] == f"[Fathom #{incident.pk}] " + incident.title
        assert "Throughput down 40% on athens->frankfurt" in first["Subject"]
        assert first.get_content_type() == "multipart/alternative"
        text, html = (part.get_content() for part in first.iter_parts())
        assert text.startswith("NEW INCIDENT") and "Path page: http" in text and "/paths/" in text
        assert "<h3>Firing: Throughput down 40%" in html
        assert resolved.get_body(preferencelist=("plain",)).get_content().startswith("RESOLVED")  # type: ignore[union-attr]
        assert server.envelopes[0][1] == ["noc@example.org"]

    def test_an_unreachable_smtp_server_is_retried_with_a_clear_error(self) -> None:
        with override_settings(EMAIL_HOST="127.0.0.1", EMAIL_PORT=9, EMAIL_TIMEOUT=2):
            channel("email")
            fire(self)
            assert outbox.deliver(Delivery.objects.get().pk).status == "retrying"
        assert "SMTP 127.0.0.1:9" in Delivery.objects.get().last_error
