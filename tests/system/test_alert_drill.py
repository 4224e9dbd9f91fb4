"""`make alert-drill` (issue 12): alerting end to end on the lab, one table row per case.

Real agents in the lab's namespaces measure two disjoint paths (deploy/lab/scenarios/
alert-drill.yaml); the server analyses what lands; the alerts worker delivers to a real SMTP
server (aiosmtpd), a Slack-like and a webhook receiver in this process. The drill adds 10 ms
to ra <-> rb and cuts ta -> tb by 40%, clears both, and silences one path and cuts it again.
Needs root. The outages that need no emulator (the alerts worker killed in the middle of a
delivery, an agent stopping) are tests/system/test_alert_outages.py, on loopback.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest
import requests
from lab.lab import Lab
from standardwebhooks import Webhook

from .alert_receivers import HttpReceiver, Mailbox, mail_kind, restart_alerts_worker, slack_kind
from .conftest import ARTIFACTS, Stack, wait_for
from .lab_agents import apply_meshes, lab_with_agents

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the lab needs root (network namespaces)")

RTT_PAIR = ("ra", "rb")
TPUT_PAIR = ("ta", "tb")
BASELINE_RUNS = 11
RATE, CUT_RATE = 100, 60
DELAY, SLOW_DELAY = 10, 20  # one-way ms on the rtt link: +10 ms each way is +20 ms of RTT
MESH_MATCHER = [{"name": "mesh", "op": "=~", "value": "drill-.*"}]
ENROL = {
    "name": "drill-enrol",
    "kind": "mesh",
    "enabled": False,
    "members": [{"agent": host} for host in (*RTT_PAIR, *TPUT_PAIR)],
    "tests": [],
}
PING = {"name": "ping", "test_type": "ping", "interval_s": 10, "spec": {"count": 10, "interval_s": 0.2}}
MESHES: list[dict[str, Any]] = [
    {"name": "drill-rtt", "kind": "mesh", "members": [{"agent": host} for host in RTT_PAIR], "tests": [PING]},
    {
        "name": "drill-tput",
        "kind": "disjoint",
        "unidirectional": True,
        "members": [{"agent": TPUT_PAIR[0], "side": "a"}, {"agent": TPUT_PAIR[1], "side": "b"}],
        "tests": [
            PING,
            {"name": "tput", "test_type": "throughput", "interval_s": 11, "slip_s": 0,
             "spec": {"duration_s": 2, "omit_s": 1, "congestion": "cubic"}},
        ],
    },
]  # fmt: skip


@dataclass
class Row:
    case: str
    seen: str
    expected: str
    ok: bool


@dataclass
class Drill:
    stack: Stack
    lab: Lab
    http: requests.Session
    mail: Mailbox
    slack: HttpReceiver
    hook: HttpReceiver
    rows: list[Row] = field(default_factory=list)

    def row(self, case: str, seen: str, expected: str, ok: bool) -> None:
        self.rows.append(Row(case, seen, expected, ok))
        print(f"[drill] {case}: {seen} (expected {expected}) {'ok' if ok else 'WRONG'}", flush=True)

    def incidents(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.http.get(f"{self.stack.url}/api/v1/alerts/incidents/", timeout=10).json()
        return [row for row in rows if self.is_drill(row["id"])]

    def detail(self, incident_id: int) -> dict[str, Any]:
        body: dict[str, Any] = self.http.get(
            f"{self.stack.url}/api/v1/alerts/incidents/{incident_id}/", timeout=10
        ).json()
        return body

    def is_drill(self, incident_id: int) -> bool:
        agents = {agent for alert in self.detail(incident_id)["alerts"] for agent in alert["labels"].get("agent", [])}
        return bool(agents & {*RTT_PAIR, *TPUT_PAIR})

    def hook_events(self) -> list[dict[str, Any]]:
        assert not self.hook.refused, f"webhooks failed verification on arrival: {self.hook.refused}"
        return list(self.hook.verified)

    def received(self, incident_id: int, kind: str) -> tuple[int, int, int]:
        """Emails, Slack posts and webhooks (distinct webhook-ids) about one incident of one kind."""
        tag = f"[Fathom #{incident_id}]"
        mails = [m for m in self.mail.messages if str(m["Subject"]).startswith(tag) and mail_kind(m) == kind]
        slack = [
            b for _, _, b in self.slack.posts if f"Incident #{incident_id} " in b.decode() and slack_kind(b) == kind
        ]
        hooks = {
            e["data"]["sequence"]
            for e in self.hook_events()
            if e["data"]["incident_id"] == incident_id and e["data"]["kind"] == kind
        }
        return len(mails), len(slack), len(hooks)

    def deliveries_of(self, incident_id: int) -> list[dict[str, Any]]:
        deliveries: list[dict[str, Any]] = self.detail(incident_id)["deliveries"]
        return deliveries


def open_drill_incidents(drill: Drill) -> list[dict[str, Any]]:
    return [row for row in drill.incidents() if row["status"] != "resolved"]


def landed(stack: Stack, ids: dict[str, str], pair: tuple[str, str], test_type: str) -> int:
    rows = stack.query(
        "SELECT count(*) FROM measurements_run WHERE source_id = %s AND destination_id = %s AND test_type = %s"
        " AND status = 'ok'",
        ids[pair[0]],
        ids[pair[1]],
        test_type,
    )
    return int(rows[0][0])


def case_two_regressions(drill: Drill, ids: dict[str, str]) -> list[int]:
    stack, lab = drill.stack, drill.lab
    wait_for(
        f"{BASELINE_RUNS} throughput runs on ta -> tb",
        lambda: landed(stack, ids, TPUT_PAIR, "throughput") >= BASELINE_RUNS,
        360,
        interval_s=3,
    )
    lab.set("rtt", delay_ms=SLOW_DELAY)
    lab.set("wan", rate_mbps=CUT_RATE)

    def both_sent() -> list[int] | None:
        incidents = open_drill_incidents(drill)
        sent = [row["id"] for row in incidents if drill.received(row["id"], "firing") == (1, 1, 1)]
        return sent if len(sent) >= 2 else None

    wait_for("two incidents, each sent by email, Slack and webhook", both_sent, 300, interval_s=3)
    time.sleep(9)  # three more ticks: a third incident or a second message would show now
    incidents = open_drill_incidents(drill)
    counts = {row["id"]: drill.received(row["id"], "firing") for row in incidents}
    titles = "; ".join(f"#{row['id']} {row['title']}" for row in incidents)
    drill.row(
        "+10 ms on ra<->rb, -40% on ta->tb",
        f"{len(incidents)} incidents ({titles}); email/Slack/webhook per incident {sorted(counts.values())}",
        "2 incidents, (1, 1, 1) each",
        len(incidents) == 2 and all(count == (1, 1, 1) for count in counts.values()),
    )
    for row in incidents:
        seen = stack.browser_check(
            "incident-view.mjs", FATHOM_INCIDENT_ID=str(row["id"]), FATHOM_SHOT=f"drill-incident-{row['id']}"
        )
        assert seen["charts"] >= 1, seen
    return [row["id"] for row in incidents]


def case_cleared(drill: Drill, incident_ids: list[int]) -> None:
    drill.lab.set("rtt", delay_ms=DELAY)
    drill.lab.set("wan", rate_mbps=RATE)

    def all_resolved_sent() -> bool:
        return all(drill.received(i, "resolved") == (1, 1, 1) for i in incident_ids)

    wait_for("a resolved message for each incident", all_resolved_sent, 480, interval_s=5)
    time.sleep(6)
    counts = [drill.received(i, "resolved") for i in incident_ids]
    drill.row(
        "both cleared",
        f"resolved email/Slack/webhook per incident {counts}",
        "(1, 1, 1) each",
        all(count == (1, 1, 1) for count in counts),
    )


def case_silenced(drill: Drill, ids: dict[str, str]) -> None:
    stack, http = drill.stack, drill.http
    now = time.time()
    silence = http.post(
        f"{stack.url}/api/v1/alerts/silences/",
        json={
            "matchers": [{"name": "path", "op": "=", "value": "ta->tb"}],
            "starts_at": datetime.fromtimestamp(now - 60).astimezone().isoformat(),
            "ends_at": datetime.fromtimestamp(now + 3600).astimezone().isoformat(),
            "comment": "alert drill: maintenance on the wan link",
        },
        timeout=10,
    )
    assert silence.status_code == 201, silence.text
    before = {row["id"] for row in drill.incidents()}
    posts_before = (len(drill.mail.messages), len(drill.slack.posts), len(drill.hook.posts))
    base = landed(stack, ids, TPUT_PAIR, "throughput")
    wait_for("3 more runs at full rate", lambda: landed(stack, ids, TPUT_PAIR, "throughput") >= base + 3, 120, 3)
    drill.lab.set("wan", rate_mbps=CUT_RATE)

    def silenced_incident() -> dict[str, Any] | None:
        for row in drill.incidents():
            if row["id"] not in before:
                alerts = drill.detail(row["id"])["alerts"]
                if alerts and all(alert["silenced"] for alert in alerts):
                    return row
        return None

    incident = wait_for("a new incident whose alerts are silenced", silenced_incident, 300, interval_s=3)
    time.sleep(9)
    deliveries = drill.deliveries_of(incident["id"])
    posts_after = (len(drill.mail.messages), len(drill.slack.posts), len(drill.hook.posts))
    drill.row(
        "a silence over ta->tb, cut again",
        f"incident #{incident['id']} recorded, alerts silenced; {len(deliveries)} deliveries; "
        f"receivers {posts_before} -> {posts_after}",
        "0 deliveries, nothing received",
        not deliveries and posts_after == posts_before,
    )
    drill.lab.set("wan", rate_mbps=RATE)
    http.post(f"{stack.url}/api/v1/alerts/silences/{silence.json()['id']}/expire/", timeout=10)


def report(rows: list[Row]) -> str:
    width = max(len(row.case) for row in rows)
    lines = [f"{'case':<{width}}  ok     seen (expected)"]
    lines += [f"{row.case:<{width}}  {'yes' if row.ok else 'NO ':<5}  {row.seen} ({row.expected})" for row in rows]
    lines.append(f"{sum(row.ok for row in rows)} of {len(rows)} cases right")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def drill(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Drill]:
    tmp = tmp_path_factory.mktemp("alert-drill")
    mail, slack, hook = Mailbox(), HttpReceiver(), HttpReceiver()
    keys = ("FATHOM_EMAIL_HOST", "FATHOM_EMAIL_PORT")
    original = {key: stack.env[key] for key in keys if key in stack.env}
    restart_alerts_worker(stack, {"FATHOM_EMAIL_HOST": "127.0.0.1", "FATHOM_EMAIL_PORT": str(mail.port)})
    http = stack.session()
    channels = []
    for name, kind, config in (
        ("drill-mail", "email", {"to": ["noc@fathom.invalid"]}),
        ("drill-slack", "slack", {"url": slack.url}),
        ("drill-hook", "webhook", {"url": hook.url}),
    ):
        body = {"name": name, "kind": kind, "config": config, "matchers": MESH_MATCHER}
        made = http.post(f"{stack.url}/api/v1/alerts/channels/", json=body, timeout=10)
        assert made.status_code == 201, made.text
        channels.append(made.json())
    rules = {r["name"]: r for r in http.get(f"{stack.url}/api/v1/alerts/rules/", timeout=10).json()}
    # Faster than the defaults, in proportion: resolve 20 s after clearing.
    drill_rules = {
        "Throughput regression": {"hold_s": 20},
        "RTT shift": {"hold_s": 20},
        "Loss increase": {"hold_s": 20},
    }
    saved = {name: {key: rules[name][key] for key in patch} for name, patch in drill_rules.items()}
    for name, patch in drill_rules.items():
        http.patch(f"{stack.url}/api/v1/alerts/rules/{rules[name]['id']}/", json=patch, timeout=10)
    try:
        with lab_with_agents(stack, tmp, "alert-drill", ENROL) as (lab, ids):
            apply_meshes(stack, tmp, MESHES)
            try:
                hook.verifier = Webhook(channels[2]["secret"])
                run = Drill(stack, lab, http, mail, slack, hook)
                incidents = case_two_regressions(run, ids)
                case_cleared(run, incidents)
                case_silenced(run, ids)
                yield run
            finally:
                apply_meshes(stack, tmp, [{"name": mesh["name"], "enabled": False} for mesh in MESHES])
    finally:
        for name, values in saved.items():
            http.patch(f"{stack.url}/api/v1/alerts/rules/{rules[name]['id']}/", json=values, timeout=10)
        for channel in channels:
            http.delete(f"{stack.url}/api/v1/alerts/channels/{channel['id']}/", timeout=10)
        for key in keys:
            stack.env.pop(key, None)
        restart_alerts_worker(stack, original)
        mail.controller.stop()
        for receiver in (slack, hook):
            receiver.server.shutdown()


def test_the_alert_drill(drill: Drill) -> None:
    text = report(drill.rows)
    (ARTIFACTS / "alert-drill.txt").write_text(text + "\n")
    print("\n" + text)
    assert all(row.ok for row in drill.rows), text
