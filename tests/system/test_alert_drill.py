"""`make alert-drill` (issue 12): alerting end to end on the lab, one table row per case.

Real agents in the lab's namespaces measure three disjoint paths of deploy/lab/scenarios/
findings-drill.yaml, a lab shared with the findings lab (findings_drill_lab.py); the server
analyses what lands; the alerts worker delivers to a real SMTP server (aiosmtpd) and to
receivers in this process for every other channel kind: Slack, a signed webhook, PagerDuty,
Opsgenie, Teams and Alertmanager (each post read as that service reads it). The drill adds 10 ms to ra <-> rb and to
qa <-> qb (under a silence from the start) and cuts ta -> tb by 40%, then clears them. Needs
root. The outages that need no emulator (the alerts worker killed in the middle of a
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

from .alert_receivers import (
    SERVICE_KINDS,
    HttpReceiver,
    Mailbox,
    ServiceReceivers,
    mail_kind,
    remove_channels_and_restart_worker,
    restart_alerts_worker,
    slack_kind,
)
from .conftest import ARTIFACTS, Stack, wait_for
from .findings_drill_lab import (
    BASELINE_RUNS,
    DRILL_MESHES,
    QUIET_PAIR,
    RTT_PAIR,
    TPUT_PAIR,
    FindingsDrillLab,
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the lab needs root (network namespaces)")

RATE, CUT_RATE = 100, 60
# A baseline run at less than this share of RATE is the machine's, not the link's.
BASELINE_FLOOR = 0.8
DELAY, SLOW_DELAY = 10, 20  # one-way ms on the rtt link: +10 ms each way is +20 ms of RTT
MESH_MATCHER = [{"name": "mesh", "op": "=~", "value": "drill-.*"}]
# What each channel got of one message: email, Slack, webhook, then the paging services.
CHANNEL_KINDS = ("email", "slack", "webhook", *SERVICE_KINDS)
EVERY, NONE = (1,) * len(CHANNEL_KINDS), (0,) * len(CHANNEL_KINDS)


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
    services: ServiceReceivers
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
        return bool(agents & {*RTT_PAIR, *TPUT_PAIR, *QUIET_PAIR})

    def silenced(self, incident_id: int) -> bool:
        alerts = self.detail(incident_id)["alerts"]
        return bool(alerts) and all(alert["silenced"] for alert in alerts)

    def hook_events(self) -> list[dict[str, Any]]:
        assert not self.hook.refused, f"webhooks failed verification on arrival: {self.hook.refused}"
        return list(self.hook.verified)

    def received(self, incident_id: int, kind: str) -> tuple[int, ...]:
        """Messages of one kind about one incident that each channel got, in CHANNEL_KINDS
        order (webhooks: distinct webhook-ids)."""
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
        return (len(mails), len(slack), len(hooks), *self.services.counts(incident_id, kind))

    def deliveries_of(self, incident_id: int) -> list[dict[str, Any]]:
        deliveries: list[dict[str, Any]] = self.detail(incident_id)["deliveries"]
        return deliveries


def open_drill_incidents(drill: Drill) -> list[dict[str, Any]]:
    return [row for row in drill.incidents() if row["status"] != "resolved"]


def silence_quiet_pair(drill: Drill) -> int:
    """A maintenance silence over drill-quiet's paths, from before anything changes."""
    now = time.time()
    silence = drill.http.post(
        f"{drill.stack.url}/api/v1/alerts/silences/",
        json={
            "matchers": [{"name": "mesh", "op": "=", "value": "drill-quiet"}],
            "starts_at": datetime.fromtimestamp(now - 60).astimezone().isoformat(),
            "ends_at": datetime.fromtimestamp(now + 3600).astimezone().isoformat(),
            "comment": "alert drill: maintenance on the quiet link",
        },
        timeout=10,
    )
    assert silence.status_code == 201, silence.text
    return int(silence.json()["id"])


def case_regressions(drill: Drill, ids: dict[str, str]) -> list[int]:
    """+10 ms on ra <-> rb and on the silenced qa <-> qb, -40 % on ta -> tb, all at once: two
    incidents sent by every channel, and a third recorded with its alerts silenced and sent
    nowhere."""
    stack, lab = drill.stack, drill.lab

    def steady_baseline() -> bool:
        """The fast rule judges the cut against the path's newest runs: cut only once they are
        the link's rate. A CI run of 2026-12-04 cut after runs a starved emulator held to
        43-59 Mbit/s of 100, and a 60 Mbit/s cut was no regression against them."""
        rates = stack.query(
            "SELECT rate_bps FROM analysis_runanalysis WHERE source_id = %s AND destination_id = %s"
            " ORDER BY started_at DESC LIMIT %s",
            ids[TPUT_PAIR[0]],
            ids[TPUT_PAIR[1]],
            BASELINE_RUNS,
        )
        return len(rates) == BASELINE_RUNS and all(rate and rate >= BASELINE_FLOOR * RATE * 1e6 for (rate,) in rates)

    wait_for(
        f"{BASELINE_RUNS} analysed throughput runs on ta -> tb, each at {BASELINE_FLOOR:.0%} of {RATE} Mbit/s or more",
        steady_baseline,
        480,
        interval_s=3,
    )
    lab.set("rtt", delay_ms=SLOW_DELAY)
    lab.set("quiet", delay_ms=SLOW_DELAY)
    lab.set("wan", rate_mbps=CUT_RATE)

    def two_sent_and_one_silenced() -> bool:
        incidents = open_drill_incidents(drill)
        silenced = [row for row in incidents if drill.silenced(row["id"])]
        sent = [row for row in incidents if drill.received(row["id"], "firing") == EVERY]
        return len(sent) >= 2 and len(silenced) >= 1

    wait_for("two incidents sent by every channel kind, a third silenced", two_sent_and_one_silenced, 300, 3)
    time.sleep(9)  # three more ticks: another incident or a second message would show now
    incidents = open_drill_incidents(drill)
    silenced = [row for row in incidents if drill.silenced(row["id"])]
    paged = [row for row in incidents if row not in silenced]
    counts = {row["id"]: drill.received(row["id"], "firing") for row in paged}
    titles = "; ".join(f"#{row['id']} {row['title']}" for row in paged)
    drill.row(
        "+10 ms on ra<->rb, -40% on ta->tb",
        f"{len(paged)} incidents ({titles}); {'/'.join(CHANNEL_KINDS)} per incident {sorted(counts.values())}",
        f"2 incidents, {EVERY} each",
        len(paged) == 2 and all(count == EVERY for count in counts.values()),
    )
    quiet = [(row["id"], len(drill.deliveries_of(row["id"])), drill.received(row["id"], "firing")) for row in silenced]
    drill.row(
        "+10 ms on qa<->qb under a silence",
        f"incidents (id, deliveries, received) {quiet}",
        "1 incident, 0 deliveries, nothing received",
        len(quiet) == 1 and quiet[0][1:] == (0, NONE),
    )
    for row in paged:
        seen = stack.browser_check(
            "incident-view", FATHOM_INCIDENT_ID=str(row["id"]), FATHOM_SHOT=f"drill-incident-{row['id']}"
        )
        assert seen["charts"] >= 1, seen
    return [row["id"] for row in incidents]


def case_cleared(drill: Drill, incident_ids: list[int]) -> None:
    for link in ("rtt", "quiet"):
        drill.lab.set(link, delay_ms=DELAY)
    drill.lab.set("wan", rate_mbps=RATE)
    paged = [i for i in incident_ids if not drill.silenced(i)]

    def all_resolved() -> bool:
        details = [drill.detail(i) for i in incident_ids]
        sent = all(drill.received(i, "resolved") == EVERY for i in paged)
        return sent and all(detail["status"] == "resolved" for detail in details)

    wait_for("every incident resolved, a resolved message for each one paged", all_resolved, 480, interval_s=5)
    time.sleep(6)
    counts = {i: drill.received(i, "resolved") for i in incident_ids}
    drill.row(
        "all cleared",
        f"resolved {'/'.join(CHANNEL_KINDS)} per incident {counts}",
        f"{EVERY} each paged one, {NONE} the silenced one",
        all(count == (EVERY if i in paged else NONE) for i, count in counts.items()),
    )


def report(rows: list[Row]) -> str:
    width = max(len(row.case) for row in rows)
    lines = [f"{'case':<{width}}  ok     seen (expected)"]
    lines += [f"{row.case:<{width}}  {'yes' if row.ok else 'NO ':<5}  {row.seen} ({row.expected})" for row in rows]
    lines.append(f"{sum(row.ok for row in rows)} of {len(rows)} cases right")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def drill(stack: Stack, findings_drill_lab: FindingsDrillLab) -> Iterator[Drill]:
    lab, ids = findings_drill_lab.lab, findings_drill_lab.ids
    mail, slack, hook, services = Mailbox(), HttpReceiver(), HttpReceiver(), ServiceReceivers()
    keys = ("FATHOM_EMAIL_HOST", "FATHOM_EMAIL_PORT")
    original = {key: stack.env[key] for key in keys if key in stack.env}
    restart_alerts_worker(stack, {"FATHOM_EMAIL_HOST": "127.0.0.1", "FATHOM_EMAIL_PORT": str(mail.port)})
    http = stack.session()
    channels = []
    for name, kind, config in (
        ("drill-mail", "email", {"to": ["noc@fathom.invalid"]}),
        ("drill-slack", "slack", {"url": slack.url}),
        ("drill-hook", "webhook", {"url": hook.url}),
        *services.channels(),
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
        hook.verifier = Webhook(channels[2]["secret"])
        run = Drill(stack, lab, http, mail, slack, hook, services)
        silence = silence_quiet_pair(run)
        try:
            case_cleared(run, case_regressions(run, ids))
        finally:
            http.post(f"{stack.url}/api/v1/alerts/silences/{silence}/expire/", timeout=10)
            findings_drill_lab.disable(DRILL_MESHES)
        yield run
    finally:
        for name, values in saved.items():
            http.patch(f"{stack.url}/api/v1/alerts/rules/{rules[name]['id']}/", json=values, timeout=10)
        remove_channels_and_restart_worker(stack, http, channels, keys, original)
        mail.controller.stop()
        for receiver in (slack, hook):
            receiver.server.shutdown()
        services.shutdown()


def test_the_alert_drill(drill: Drill) -> None:
    text = report(drill.rows)
    (ARTIFACTS / "alert-drill.txt").write_text(text + "\n")
    print("\n" + text)
    assert all(row.ok for row in drill.rows), text
