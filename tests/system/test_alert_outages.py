"""Alerting through outages, on the loopback stack: the alerts worker killed in the middle of a
delivery loses and repeats nothing, and an agent that stops pages once, as that agent down,
with its paths' no-data alerts held back.

Neither needs the lab's emulator (they were the last cases of the lab's alert drill, whose
lane is CI's longest): two agents of their own (out-a, out-b) ping each other in a mesh of
their own, the alerts worker sends to a real SMTP server (aiosmtpd) and a webhook receiver in
this process, through channels that match only that mesh.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests
from standardwebhooks import Webhook

from .alert_receivers import (
    HttpReceiver,
    Mailbox,
    kill_alerts_worker,
    mail_kind,
    remove_channels_and_restart_worker,
    restart_alerts_worker,
    start_alerts_worker,
)
from .conftest import SYSTEST_NET, Agent, Stack, free_port, stop_process, wait_for
from .lab_agents import apply_meshes

MESH = "outage"
PING = {"name": "ping", "test_type": "ping", "interval_s": 10, "spec": {"count": 10, "interval_s": 0.2}}
EMAIL_ENV = ("FATHOM_EMAIL_HOST", "FATHOM_EMAIL_PORT", "FATHOM_ALERT_STALE_SENDING_S")
# A finding planted on out-a -> out-b: the incident whose delivery the killed worker interrupts.
PLANT = """
from datetime import timedelta
from django.utils import timezone
from analysis.models import Finding
from inventory.models import Agent
now = timezone.now()
Finding.objects.create(
    source=Agent.objects.get(name="out-a"), destination=Agent.objects.get(name="out-b"), metric="throughput",
    direction="down", started_at=now - timedelta(minutes=5), detected_at=now, baseline=9.4e8, current=5.6e8,
    magnitude=-0.4, unit="relative",
)
"""
CLEAR = """
from django.utils import timezone
from analysis.models import Finding
Finding.objects.filter(source__name="out-a", state="open").update(state="cleared", cleared_at=timezone.now())
"""


# The two agents go afterwards (their runs, findings and alerts with them): left in the
# default mesh, sys-a and sys-b would keep planning tests to addresses nothing answers.
@dataclass
class Outage:
    stack: Stack
    http: requests.Session
    mail: Mailbox
    hook: HttpReceiver
    a: Agent
    b: Agent

    def incidents(self, before: set[int]) -> list[dict[str, Any]]:
        """Incidents opened since `before` that involve out-a or out-b."""
        rows: list[dict[str, Any]] = self.http.get(f"{self.stack.url}/api/v1/alerts/incidents/", timeout=10).json()
        return [row for row in rows if row["id"] not in before and self.involves(row["id"])]

    def detail(self, incident_id: int) -> dict[str, Any]:
        url = f"{self.stack.url}/api/v1/alerts/incidents/{incident_id}/"
        body: dict[str, Any] = self.http.get(url, timeout=10).json()
        return body

    def involves(self, incident_id: int) -> bool:
        agents = {agent for alert in self.detail(incident_id)["alerts"] for agent in alert["labels"].get("agent", [])}
        return bool(agents & {self.a.name, self.b.name})

    def ids(self) -> set[int]:
        rows = self.http.get(f"{self.stack.url}/api/v1/alerts/incidents/", timeout=10).json()
        return {int(row["id"]) for row in rows}

    def webhooks(self, incident_id: int, kind: str) -> list[dict[str, Any]]:
        assert not self.hook.refused, f"webhooks failed verification on arrival: {self.hook.refused}"
        return [e for e in self.hook.verified if e["data"]["incident_id"] == incident_id and e["data"]["kind"] == kind]

    def mails(self, incident_id: int, kind: str | None = None) -> list[str]:
        """The Message-IDs of the emails about the incident (of one kind: firing, update, ...)."""
        tag = f"[Fathom #{incident_id}]"
        return [
            str(m["Message-ID"])
            for m in self.mail.messages
            if str(m["Subject"]).startswith(tag) and kind in (None, mail_kind(m))
        ]


def pings_between(stack: Stack, a: Agent, b: Agent) -> bool:
    rows = stack.query(
        "SELECT count(DISTINCT (source_id, destination_id)) FROM measurements_run"
        " WHERE test_type = 'ping' AND status = 'ok' AND source_id IN (%s, %s) AND destination_id IN (%s, %s)",
        a.agent_id,
        b.agent_id,
        a.agent_id,
        b.agent_id,
    )
    return int(rows[0][0]) == 2


@pytest.fixture(scope="module")
def outage(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outage]:
    tmp = tmp_path_factory.mktemp("outage")
    mail, hook = Mailbox(), HttpReceiver()
    original = {key: stack.env[key] for key in EMAIL_ENV if key in stack.env}
    # A send in flight longer than 15 s is taken as lost by a dead worker and sent again.
    restart_alerts_worker(
        stack,
        {"FATHOM_EMAIL_HOST": "127.0.0.1", "FATHOM_EMAIL_PORT": str(mail.port), "FATHOM_ALERT_STALE_SENDING_S": "15"},
    )
    http = stack.session()
    channels = []
    for name, kind, config in (
        ("outage-mail", "email", {"to": ["noc@fathom.invalid"]}),
        ("outage-hook", "webhook", {"url": hook.url}),
    ):
        body = {"name": name, "kind": kind, "config": config, "matchers": [{"name": "mesh", "op": "=", "value": MESH}]}
        made = http.post(f"{stack.url}/api/v1/alerts/channels/", json=body, timeout=10)
        assert made.status_code == 201, made.text
        channels.append(made.json())
    hook.verifier = Webhook(channels[1]["secret"])
    rules = {r["name"]: r for r in http.get(f"{stack.url}/api/v1/alerts/rules/", timeout=10).json()}
    # No data is held 60 s: still longer than an agent takes to count as down here (30 s).
    no_data = rules["No data"]
    http.patch(f"{stack.url}/api/v1/alerts/rules/{no_data['id']}/", json={"pending_s": 60}, timeout=10)
    a = Agent("out-a", f"{SYSTEST_NET}.5", free_port(), tmp / "agent-out-a")
    b = Agent("out-b", f"{SYSTEST_NET}.6", free_port(), tmp / "agent-out-b")
    try:
        for agent in (a, b):
            stack.enrol(agent)
            stack.start_agent(agent)
        members = [{"agent": agent.name} for agent in (a, b)]
        apply_meshes(stack, tmp, [{"name": MESH, "kind": "mesh", "members": members, "tests": [PING]}])
        wait_for("pings both ways between out-a and out-b", lambda: pings_between(stack, a, b), 120, interval_s=2)
        yield Outage(stack, http, mail, hook, a, b)
    finally:
        apply_meshes(stack, tmp, [{"name": MESH, "enabled": False}])
        for agent in (a, b):
            process = stack.processes.pop(f"agent-{agent.name}", None)
            if process is not None:
                stop_process(process)
        stack.remove_agents("out-a", "out-b")
        http.patch(
            f"{stack.url}/api/v1/alerts/rules/{no_data['id']}/", json={"pending_s": no_data["pending_s"]}, timeout=10
        )
        remove_channels_and_restart_worker(stack, http, channels, EMAIL_ENV, original)
        mail.controller.stop()
        hook.server.shutdown()


def test_a_worker_killed_mid_delivery_loses_and_repeats_nothing(outage: Outage) -> None:
    """SIGKILL while the webhook holds the incident's first send: after the restart every
    delivery is sent, and each message reached its receiver under one webhook-id and one
    Message-ID (a resend keeps them, so the receiver can drop the duplicate)."""
    stack = outage.stack
    before = outage.ids()
    outage.hook.delay_s = 30.0
    stack.manage("shell", "-c", PLANT)

    def in_flight() -> int | None:
        return next((row["id"] for row in outage.incidents(before) if outage.webhooks(row["id"], "firing")), None)

    incident_id = wait_for("the webhook receiving the new incident (and stalling)", in_flight, 120, interval_s=1)
    kill_alerts_worker(stack)
    outage.hook.delay_s = 0.0
    start_alerts_worker(stack)

    def all_sent() -> list[dict[str, Any]] | None:
        deliveries: list[dict[str, Any]] = outage.detail(incident_id)["deliveries"]
        return deliveries if deliveries and all(d["status"] == "sent" for d in deliveries) else None

    deliveries = wait_for("every delivery of the incident sent after the restart", all_sent, 180, interval_s=2)
    posts = [h for _, h, b in outage.hook.posts if f'"incident_id":{incident_id},' in b.decode()]
    webhook_rows = [d for d in deliveries if d["channel_kind"] == "webhook"]
    email_rows = [d for d in deliveries if d["channel_kind"] == "email"]
    assert posts, "the webhook received the incident"
    assert len({h["webhook-id"] for h in posts}) == len(webhook_rows), (posts, webhook_rows)
    assert len(set(outage.mails(incident_id))) == len(email_rows), (outage.mails(incident_id), email_rows)

    # Cleared and resolved by hand, so the next test's outage opens an incident of its own.
    stack.manage("shell", "-c", CLEAR)
    resolved = outage.http.post(
        f"{stack.url}/api/v1/alerts/incidents/{incident_id}/resolve/", json={"comment": "planted"}, timeout=10
    )
    assert resolved.status_code == 200, resolved.text


def test_an_agent_that_stops_pages_once_as_that_agent_down(outage: Outage) -> None:
    """out-b stops: one incident, "Agent out-b down", sent by email and webhook; the no-data
    alerts of its paths join it held back (inhibited) and no message lists them."""
    stack = outage.stack
    before = outage.ids()
    stop_process(stack.processes.pop(f"agent-{outage.b.name}"))

    def down_incident() -> dict[str, Any] | None:
        for row in outage.incidents(before):
            sent = outage.webhooks(row["id"], "firing") and outage.mails(row["id"], "firing")
            if "Agent out-b down" in row["title"] and sent:
                return row
        return None

    incident = wait_for("an agent-down incident, sent", down_incident, 180, interval_s=2)

    def no_data_held() -> list[dict[str, Any]] | None:
        alerts = [a for a in outage.detail(incident["id"])["alerts"] if a["rule"] == "No data"]
        return alerts or None

    no_data = wait_for("no-data alerts of out-b's paths", no_data_held, 180, interval_s=2)
    time.sleep(6)  # two more ticks: another incident or message would show now
    others = [row for row in outage.incidents(before) if row["id"] != incident["id"]]
    listed = [
        alert["summary"]
        for event in outage.webhooks(incident["id"], "firing") + outage.webhooks(incident["id"], "update")
        for alert in event["data"]["firing"]
        if alert["rule"] == "No data"
    ]
    assert all(alert["inhibited"] for alert in no_data), no_data
    assert sum(len(outage.detail(row["id"])["deliveries"]) for row in others) == 0, others
    assert not listed, listed
    assert len(outage.webhooks(incident["id"], "firing")) == 1 and len(outage.mails(incident["id"], "firing")) == 1
