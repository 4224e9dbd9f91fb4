"""PagerDuty, Opsgenie, Teams and Alertmanager channels against local HTTP servers that check
each request against the service's documented body and answer as the service documents,
errors included: what disables a channel, what fails one message, what is retried."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

from django.test import override_settings

from alerts.models import Channel, Delivery, Incident
from alerts.services import delivery as outbox
from alerts.services.evaluate import acknowledge, evaluate, resolve
from alerts.tests.helpers import OPSGENIE_KEY, PAGERDUTY_KEY, T0, channel, finding, later
from alerts.tests.receivers import HttpReceiver, Received, Reply
from alerts.transports import TRANSPORTS, ConfigError, opsgenie, teams
from analysis.models import Finding
from fathom.testing import FathomTestCase

PD_ACCEPTED = Reply(202, '{"status":"success","message":"Event processed","dedup_key":"k"}')
OG_ACCEPTED = Reply(202, '{"result":"Request will be processed","took":0.302,"requestId":"43a29c5c"}')
TEAMS_ACCEPTED = Reply(202, "")
AM_ACCEPTED = Reply(200, "")


def pagerduty_problems(event: dict[str, Any]) -> list[str]:
    """What PagerDuty's Events API v2 documents an event must be."""
    problems = [f"unknown field {key}" for key in event if key not in {
        "routing_key", "event_action", "dedup_key", "payload", "images", "links", "client", "client_url"}]  # fmt: skip
    if not re.fullmatch(r"[A-Za-z0-9]{32}", str(event.get("routing_key"))):
        problems.append("routing_key")
    if event.get("event_action") not in ("trigger", "acknowledge", "resolve"):
        problems.append("event_action")
    if not 0 < len(str(event.get("dedup_key", ""))) <= 255:
        problems.append("dedup_key")
    if event.get("event_action") == "trigger":
        payload = event.get("payload") or {}
        if not 0 < len(payload.get("summary", "")) <= 1024 or not payload.get("source"):
            problems.append("payload summary/source")
        if payload.get("severity") not in ("critical", "error", "warning", "info"):
            problems.append("payload.severity")
        datetime.fromisoformat(payload["timestamp"])
    elif "payload" in event:
        problems.append("an acknowledge or resolve carries no payload")
    return problems


def opsgenie_problems(received: Received) -> list[str]:
    """What Opsgenie's Alert API documents: the GenieKey header, a create's message (130
    characters) and alias (512), an action's alias named by identifierType."""
    body = json.loads(received.body)
    problems = [] if received.headers.get("authorization") == f"GenieKey {OPSGENIE_KEY}" else ["authorization"]
    if received.path.endswith("/v2/alerts"):
        if not 0 < len(body.get("message", "")) <= 130 or not 0 < len(body.get("alias", "")) <= 512:
            problems.append("message/alias")
        if body.get("priority") not in ("P1", "P2", "P3", "P4", "P5") or len(body.get("description", "")) > 15000:
            problems.append("priority/description")
    elif not re.search(r"/v2/alerts/[^/]+/(close|acknowledge|notes)\?identifierType=alias$", received.path):
        problems.append(f"path {received.path}")
    elif "/notes?" in received.path and not body.get("note"):
        problems.append("a note without its text")
    return problems


@override_settings(ALERT_GROUP_WAIT_S=30, ALERT_GROUP_INTERVAL_S=300)
class ServiceChannelTests(FathomTestCase):
    def fire(self) -> Incident:
        finding(self.athens, self.frankfurt)
        evaluate(T0)
        evaluate(later(31))
        return Incident.objects.get()

    def reset(self) -> None:
        for model in (Channel, Incident, Finding):
            model.objects.all().delete()

    def send_all(self) -> list[str]:
        return [outbox.deliver(row.pk).status for row in Delivery.objects.filter(status="pending").order_by("pk")]

    def end(self, incident: Incident) -> None:
        """Resolved by hand; the next tick sends the resolve."""
        resolve(incident, self.owner, "fixed", later(60))
        evaluate(later(400))

    def test_pagerduty_triggers_acknowledges_and_resolves_one_alert(self) -> None:
        with HttpReceiver(PD_ACCEPTED) as receiver:
            pd = channel("pagerduty", url=receiver.url)
            channel("webhook", url=receiver.url.replace("/hook", "/webhook"))
            incident = self.fire()
            assert self.send_all() == ["sent", "sent"]
            queued = acknowledge(incident, self.operator, "on it", later(40))
            assert [Delivery.objects.get(pk=pk).channel_id for pk in queued] == [pd.pk], "only PagerDuty hears acks"
            assert self.send_all() == ["sent"]
            self.end(incident)
            assert self.send_all() == ["sent", "sent"]
        events = [json.loads(r.body) for r in receiver.received if r.path == "/hook"]
        assert [e["event_action"] for e in events] == ["trigger", "acknowledge", "resolve"]
        assert all(pagerduty_problems(e) == [] for e in events), [pagerduty_problems(e) for e in events]
        assert len({e["dedup_key"] for e in events}) == 1 and events[0]["dedup_key"].endswith(
            f":incident:{incident.pk}"
        )
        payload = events[0]["payload"]
        assert payload["summary"].startswith("Throughput down 40%") and payload["severity"] == incident.severity
        assert payload["source"] == "athens, frankfurt" and payload["component"] == "athens->frankfurt"
        assert events[0]["links"][0]["href"].endswith(f"/incidents/{incident.pk}")
        assert "Throughput down 40%" in payload["custom_details"]["text"]

    def test_pagerduty_errors_as_documented(self) -> None:
        invalid = '{"status":"invalid event","message":"Event object is invalid","errors":["%s"]}'
        cases = [
            # A wrong key fails every event: the channel stops.
            (Reply(400, invalid % "Length of 'routing_key' is incorrect (should be 32 characters)"), "failed", False),
            # An event PagerDuty will not take fails that event; the channel stays.
            (Reply(400, invalid % "'payload.summary' is missing or blank"), "failed", True),
            (
                Reply(
                    429, '{"status":"throttle event","message":"Requests for this service are arriving too quickly."}'
                ),
                "retrying",
                True,
            ),
            (Reply(502, "Bad Gateway"), "retrying", True),
        ]
        for reply, status, stays_enabled in cases:
            self.reset()
            with HttpReceiver(reply) as receiver:
                channel("pagerduty", url=receiver.url)
                self.fire()
                assert self.send_all() == [status], reply
            assert Channel.objects.get().enabled == stays_enabled, (reply, Channel.objects.get().disabled_reason)

    def test_opsgenie_creates_notes_acknowledges_and_closes_by_alias(self) -> None:
        with HttpReceiver(OG_ACCEPTED) as receiver:
            channel("opsgenie", url=receiver.url)
            incident = self.fire()
            assert self.send_all() == ["sent"]
            # A second path degrades: the update is a note on the same alert.
            finding(self.frankfurt, self.athens)
            evaluate(later(400))
            assert self.send_all() == ["sent"]
            acknowledge(incident, self.operator, "looking", later(410))
            assert self.send_all() == ["sent"]
            self.end(incident)
            assert self.send_all() == ["sent"]
        paths = [r.path.removeprefix("/hook") for r in receiver.received]
        alias = json.loads(receiver.received[0].body)["alias"]
        quoted = re.escape(alias.replace(":", "%3A"))
        assert paths[0] == "/v2/alerts", paths
        assert [re.sub(quoted, "ALIAS", p) for p in paths[1:]] == [
            "/v2/alerts/ALIAS/notes?identifierType=alias",
            "/v2/alerts/ALIAS/acknowledge?identifierType=alias",
            "/v2/alerts/ALIAS/close?identifierType=alias",
        ], paths
        assert all(opsgenie_problems(r) == [] for r in receiver.received), [
            opsgenie_problems(r) for r in receiver.received
        ]
        created = json.loads(receiver.received[0].body)
        assert (
            created["priority"] == opsgenie.PRIORITIES[incident.severity]
            and created["details"]["paths"] == "athens->frankfurt"
        )
        note = json.loads(receiver.received[1].body)["note"]
        assert note.startswith("Incident updated (1 new)"), note
        assert json.loads(receiver.received[2].body)["user"] == "operator"

    def test_opsgenie_errors_as_documented(self) -> None:
        cases = [
            (Reply(401, '{"message":"Could not authenticate","took":0.0,"requestId":"r"}'), "failed", False),
            (Reply(403, '{"message":"You are not authorized for this action","took":0.0}'), "failed", False),
            (
                Reply(
                    422,
                    '{"message":"Request body is not processable.","errors":{"message":"Message can not be empty."}}',
                ),
                "failed",
                True,
            ),
            (Reply(429, '{"message":"Too many requests","took":0.0}', {"Retry-After": "30"}), "retrying", True),
        ]
        for reply, status, stays_enabled in cases:
            self.reset()
            with HttpReceiver(reply) as receiver:
                channel("opsgenie", url=receiver.url)
                self.fire()
                assert self.send_all() == [status], reply
            assert Channel.objects.get().enabled == stays_enabled, reply
        # Closing an alert Opsgenie no longer has loses that message, not the channel.
        self.reset()
        with HttpReceiver(OG_ACCEPTED, Reply(404, '{"message":"Alert does not exist","took":0.0}')) as receiver:
            channel("opsgenie", url=receiver.url)
            self.end(self.fire())
            assert self.send_all() == ["sent", "failed"]
        assert Channel.objects.get().enabled

    def test_teams_gets_an_adaptive_card_it_renders(self) -> None:
        with HttpReceiver(TEAMS_ACCEPTED) as receiver:
            channel("teams", url=receiver.url)
            incident = self.fire()
            assert self.send_all() == ["sent"]
            acknowledge(incident, self.operator, "", later(40))
            assert self.send_all() == [], "Teams has no acknowledgement to follow"
        body = json.loads(receiver.received[0].body)
        assert body["type"] == "message" and len(body["attachments"]) == 1
        attachment = body["attachments"][0]
        assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
        card = attachment["content"]
        assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
        texts = [block.get("text", "") for block in card["body"]]
        assert texts[0] == "New incident" and any(t.startswith("Firing: Throughput down 40%") for t in texts)
        assert card["actions"][0]["url"].endswith(f"/incidents/{incident.pk}")

    def test_a_teams_card_stays_within_its_size_cap(self) -> None:
        alert = {"summary": "x" * 5000, "rule": "r", "severity": "warning", "advice": "a" * 5000, "path": "a->b"}
        message = {
            "kind": "firing", "headline": "New incident", "title": "t" * 400, "changes": "", "acknowledged_by": None,
            "firing": [alert] * 30, "resolved": [], "incident_id": 1, "severity": "warning", "opened_at": "now",
            "url": "http://x/incidents/1",
        }  # fmt: skip
        assert len(json.dumps(teams.teams_message(message)).encode()) <= teams.CARD_MAX_BYTES

    def test_teams_errors_as_documented(self) -> None:
        cases = [
            (
                Reply(400, '{"error":{"code":"TriggerInputSchemaMismatch","message":"The input body ..."}}'),
                "failed",
                True,
            ),
            (Reply(401, '{"error":{"code":"DirectApiAuthorizationRequired","message":"..."}}'), "failed", False),
            (Reply(404, '{"error":{"code":"WorkflowTriggerNotFound","message":"..."}}'), "failed", False),
            (Reply(429, '{"error":{"code":"WorkflowRequestsThrottled"}}', {"Retry-After": "12"}), "retrying", True),
        ]
        for reply, status, stays_enabled in cases:
            self.reset()
            with HttpReceiver(reply) as receiver:
                channel("teams", url=receiver.url)
                self.fire()
                assert self.send_all() == [status], reply
            assert Channel.objects.get().enabled == stays_enabled, reply

    def test_alertmanager_holds_each_alert_and_ends_it_with_the_same_labels(self) -> None:
        with HttpReceiver(AM_ACCEPTED) as receiver:
            channel("alertmanager", url=receiver.url, bearer_token="s3cret-token", hold_h=6)
            incident = self.fire()
            assert self.send_all() == ["sent"]
            acknowledge(incident, self.operator, "", later(40))
            self.end(incident)
            assert self.send_all() == ["sent"], "Alertmanager hears the resolve, not the acknowledgement"
        assert [r.path for r in receiver.received] == ["/hook/api/v2/alerts"] * 2
        assert receiver.received[0].headers["authorization"] == "Bearer s3cret-token"
        (fired,), (ended,) = (json.loads(r.body) for r in receiver.received)
        assert fired["labels"] == ended["labels"], "one alert in Alertmanager, from start to end"
        labels = fired["labels"]
        assert labels["alertname"] == "Throughput regression" and labels["fathom_incident"] == str(incident.pk)
        assert labels["path"] == "athens->frankfurt" and labels["agent"] == "athens,frankfurt"
        assert all(re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", name) for name in labels)
        sent_at = datetime.fromisoformat(fired["startsAt"])
        assert datetime.fromisoformat(fired["endsAt"]) == later(31) + timedelta(hours=6), fired
        assert datetime.fromisoformat(ended["endsAt"]) <= later(400) and sent_at <= later(31)
        assert fired["annotations"]["summary"].startswith("Throughput down 40%")

    def test_alertmanager_errors_as_documented(self) -> None:
        cases = [
            (Reply(400, '{"code":400,"message":"start time must be before end time"}'), "failed", True),
            (Reply(401, "Unauthorized"), "failed", False),
            (Reply(503, "Service Unavailable", {"Retry-After": "5"}), "retrying", True),
        ]
        for reply, status, stays_enabled in cases:
            self.reset()
            with HttpReceiver(reply) as receiver:
                channel("alertmanager", url=receiver.url)
                self.fire()
                assert self.send_all() == [status], reply
            assert Channel.objects.get().enabled == stays_enabled, reply

    def test_a_test_send_of_each_service_pages_nobody(self) -> None:
        """PagerDuty and Opsgenie get an alert of the test's own that is closed at once;
        Alertmanager one that is already over."""
        replies = {
            "pagerduty": PD_ACCEPTED,
            "opsgenie": OG_ACCEPTED,
            "teams": TEAMS_ACCEPTED,
            "alertmanager": AM_ACCEPTED,
        }
        self.client.force_login(self.owner)
        for kind, reply in replies.items():
            with HttpReceiver(reply) as receiver:
                made = channel(kind, url=receiver.url)
                answer = self.client.post(f"/api/v1/alerts/channels/{made.pk}/test/")
                assert answer.status_code == 200 and answer.json()["status"] == "sent", (kind, answer.json())
            bodies = [json.loads(r.body) for r in receiver.received]
            if kind == "pagerduty":
                assert [b["event_action"] for b in bodies] == ["trigger", "resolve"]
                assert bodies[0]["dedup_key"] == bodies[1]["dedup_key"] and "test" in bodies[0]["dedup_key"]
            elif kind == "opsgenie":
                assert bodies[0]["priority"] == "P5" and receiver.received[1].path.split("?")[0].endswith("/close")
            elif kind == "alertmanager":
                assert (
                    bodies[0][0]["startsAt"] == bodies[0][0]["endsAt"]
                    and bodies[0][0]["labels"]["alertname"] == "FathomTest"
                )
            else:
                assert bodies[0]["attachments"][0]["content"]["body"][0]["text"] == "Test message"

    def test_service_keys_are_checked_kept_and_never_shown(self) -> None:
        self.client.force_login(self.owner)
        bad = [
            ("pagerduty", {"routing_key": "https://events.pagerduty.com/integration/abc"}),
            ("pagerduty", {"routing_key": PAGERDUTY_KEY + " "}),
            ("opsgenie", {"api_key": "not-a-key"}),
            ("opsgenie", {"api_key": OPSGENIE_KEY, "url": "ftp://api.opsgenie.com"}),
            ("teams", {}),
            ("alertmanager", {"url": "http://am.example.org:9093", "hold_h": 0}),
            ("alertmanager", {"url": "http://am.example.org:9093", "bearer_token": "has a space"}),
        ]
        for kind, config in bad:
            answer = self.client.post(
                "/api/v1/alerts/channels/",
                {"name": f"bad-{kind}", "kind": kind, "config": config},
                content_type="application/json",
            )
            assert answer.status_code == 400 and "config" in answer.json(), (kind, config, answer.json())
        assert not Channel.objects.exists(), "nothing half-made"
        made = self.client.post(
            "/api/v1/alerts/channels/",
            {"name": "pd", "kind": "pagerduty", "config": {"routing_key": PAGERDUTY_KEY}},
            content_type="application/json",
        )
        assert made.status_code == 201, made.json()
        shown = json.dumps(self.client.get("/api/v1/alerts/channels/").json(), ensure_ascii=False)
        assert PAGERDUTY_KEY not in shown and f"…{PAGERDUTY_KEY[-4:]}" in shown
        # An edit that leaves the key out keeps it.
        pk = made.json()["id"]
        edited = self.client.patch(
            f"/api/v1/alerts/channels/{pk}/",
            {"config": {"url": "https://events.eu.pagerduty.com/v2/enqueue"}},
            content_type="application/json",
        )
        assert edited.status_code == 200, edited.json()
        assert Channel.objects.get(pk=pk).config["routing_key"] == PAGERDUTY_KEY
        # The API's own address pasted for Alertmanager's: its base is kept.
        am = TRANSPORTS["alertmanager"].clean_config({"url": "https://am.example.org:9093/api/v2/alerts/"})
        assert am == {"url": "https://am.example.org:9093", "hold_h": 24}
        for kind, transport in TRANSPORTS.items():
            for secret in transport.secret_keys:
                assert "SECRET-VALUE" not in transport.target({secret: "SECRET-VALUE", "url": "http://h/p"}), kind

    def test_clean_config_refuses_every_malformed_shape(self) -> None:
        for kind, transport in TRANSPORTS.items():
            shapes: tuple[Any, ...] = (None, [], "x", {"unknown": 1})
            for raw in shapes:
                try:
                    transport.clean_config(raw)
                except ConfigError:
                    continue
                raise AssertionError(f"{kind} took {raw!r}")
