"""Alerting on the real stack: a finding becomes an incident, the Celery worker delivers it
to a local webhook receiver (signature verified by the standardwebhooks package), and the
NOC works it in the browser: acknowledge, silence from here, resolve."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook

from .conftest import ARTIFACTS, Stack, wait_for
from .lab_agents import apply_meshes

# A far end with no measurements, so no analysis pass reconciles (clears) the finding the
# test plants on its path. The default mesh takes in every agent, sys-far too, and sys-a
# would start measuring it within a plan poll: the test pauses that mesh meanwhile.
PLANT = """
from datetime import timedelta
from django.utils import timezone
from analysis.models import Finding, RunAnalysis
from inventory.models import Agent
far, _ = Agent.objects.get_or_create(name="sys-far", defaults={"address": "127.0.0.9", "credential_sha256": "0" * 64})
now = timezone.now()
Finding.objects.create(
    source=Agent.objects.get(name="sys-a"), destination=far, metric="throughput", direction="down",
    started_at=now - timedelta(minutes=5), detected_at=now, baseline=9.4e8, current=5.6e8, magnitude=-0.4,
    unit="relative",
)
"""
CLEAR = """
from django.utils import timezone
from analysis.models import Finding
Finding.objects.filter(destination__name="sys-far", state="open").update(state="cleared", cleared_at=timezone.now())
"""

# Two degraded paths of four agents with no processes (nothing measures or clears them), both
# traced through 198.18.99.9; a third path, measured since, through another router.
PLANT_SHARED_ROUTER = """
import uuid
from datetime import timedelta
from django.utils import timezone
from analysis.models import Finding
from inventory.models import Agent
from measurements.models import PathLatestRun, TracePath
now = timezone.now()
agent = {}
for index, name in enumerate(("sys-w1", "sys-w2", "sys-e1", "sys-e2"), start=41):
    agent[name], _ = Agent.objects.get_or_create(
        name=name, defaults={"address": f"127.0.0.{index}", "credential_sha256": "0" * 64}
    )
def traced(source, destination, *routers):
    hops = [{"ttl": ttl, "probes": [{"address": address, "rtt_ms": float(ttl)}]}
            for ttl, address in enumerate([*routers, destination.address], start=1)]
    TracePath.objects.create(time=now - timedelta(minutes=10), run_id=uuid.uuid4(), flow=0, source_id=source.pk,
                             destination_id=destination.pk, src_port=31000, reached=True,
                             fingerprint=uuid.uuid4().hex[:16], hop_count=len(hops), hops=hops)
traced(agent["sys-w1"], agent["sys-e1"], "198.18.90.1", "198.18.99.9")
traced(agent["sys-w2"], agent["sys-e2"], "198.18.91.1", "198.18.99.9")
traced(agent["sys-w1"], agent["sys-e2"], "198.18.90.1", "198.18.98.8")
PathLatestRun.objects.update_or_create(source=agent["sys-w1"], destination=agent["sys-e2"], test_type="throughput",
                                       defaults={"run_id": uuid.uuid4(), "started_at": now + timedelta(seconds=3),
                                                 "status": "ok"})
for second in (1, 2, 3):  # the three analysed runs the fast rule needs to have judged the path unchanged
    RunAnalysis.objects.create(run_id=uuid.uuid4(), started_at=now + timedelta(seconds=second),
                               source=agent["sys-w1"], destination=agent["sys-e2"], streams=1, rate_bps=9.4e8,
                               ceiling_bps=1e9, limit="link", diagnosis="capacity", ceilings={}, inputs={},
                               interval_stats={}, evidence={})
for source, destination in (("sys-w1", "sys-e1"), ("sys-w2", "sys-e2")):
    Finding.objects.create(
        source=agent[source], destination=agent[destination], metric="throughput", direction="down",
        started_at=now - timedelta(minutes=5), detected_at=now, baseline=9.4e8, current=5.6e8, magnitude=-0.4,
        unit="relative",
    )
"""
# The four agents go again (their findings, latest runs and alerts' paths with them): left
# in the default mesh, sys-a would plan tests to four addresses nothing answers, and the
# tests after this one would share the stack with them.
SHARED_ROUTER_AGENTS = ("sys-w1", "sys-w2", "sys-e1", "sys-e2")


class Receiver:
    def __init__(self) -> None:
        self.bodies: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.bodies.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/fathom"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


@pytest.fixture
def default_mesh_paused(stack: Stack, tmp_path: Path) -> Iterator[None]:
    apply_meshes(stack, tmp_path, [{"name": "default", "enabled": False}])
    yield
    apply_meshes(stack, tmp_path, [{"name": "default", "enabled": True}])


@pytest.mark.browser
@pytest.mark.usefixtures("default_mesh_paused")
def test_a_finding_is_delivered_once_and_worked_in_the_browser(stack: Stack, receiver: Receiver) -> None:
    http = stack.session()
    made = http.post(
        f"{stack.url}/api/v1/alerts/channels/",
        json={
            "name": "systest-hook",
            "kind": "webhook",
            "config": {"url": receiver.url},
            # Only this test's incidents: other tests' stopped agents raise their own.
            "matchers": [{"name": "path", "op": "=", "value": "sys-a->sys-far"}],
        },
        timeout=10,
    )
    assert made.status_code == 201, made.text
    verifier = Webhook(made.json()["secret"])
    try:
        stack.manage("shell", "-c", PLANT)

        def incident() -> dict[str, Any] | None:
            rows = http.get(f"{stack.url}/api/v1/alerts/incidents/?status=open", timeout=10).json()
            return next((row for row in rows if "sys-a->sys-far" in row["title"]), None)

        opened = wait_for("an incident for the planted finding", incident, 60)
        events = wait_for("the webhook delivery", lambda: [verifier.verify(b, h) for h, b in receiver.bodies], 60)
        assert [e["type"] for e in events] == ["incident.firing"]
        assert events[0]["data"]["firing"][0]["summary"].startswith("Throughput down 40% on sys-a->sys-far")

        seen = stack.browser_check("incident-page", FATHOM_INCIDENT_TITLE=opened["title"])
        (ARTIFACTS / "incident-timeline.json").write_text(json.dumps(seen["timeline"], indent=1))
        detail = http.get(f"{stack.url}/api/v1/alerts/incidents/{opened['id']}/", timeout=10).json()
        kinds = [event["kind"] for event in detail["events"]]
        assert "acknowledged" in kinds and kinds[-1] in ("resolved", "notified")
        assert detail["status"] == "resolved" and detail["resolved_by"] == stack.admin_user
        silences = http.get(f"{stack.url}/api/v1/alerts/silences/", timeout=10).json()
        assert silences[0]["matchers"][0] == {"name": "path", "op": "=", "value": "sys-a->sys-far"}
        assert silences[0]["state"] == "active" and silences[0]["comment"] == "maintenance on sys-b, ticket 42"

        resolved = wait_for(
            "the resolved message", lambda: len(receiver.bodies) >= 2 and verifier.verify(*receiver.bodies[1][::-1]), 60
        )
        assert resolved["type"] == "incident.resolved"
        # The finding still holds: a new alert fires at the next tick, silenced, so it is
        # recorded and nothing is sent for it.

        def silenced_again() -> bool:
            rows = http.get(f"{stack.url}/api/v1/alerts/incidents/?status=open", timeout=10).json()
            again = [row for row in rows if "sys-a->sys-far" in row["title"] and row["id"] != opened["id"]]
            if not again:
                return False
            alerts = http.get(f"{stack.url}/api/v1/alerts/incidents/{again[0]['id']}/", timeout=10).json()["alerts"]
            return all(alert["silenced"] for alert in alerts)

        wait_for("the persisting finding's new, silenced alert", silenced_again, 60)
        assert len(receiver.bodies) == 2, "nothing is delivered for a silenced alert"
    finally:
        stack.manage("shell", "-c", CLEAR)
        for silence in http.get(f"{stack.url}/api/v1/alerts/silences/", timeout=10).json():
            http.post(f"{stack.url}/api/v1/alerts/silences/{silence['id']}/expire/", timeout=10)
        http.delete(f"{stack.url}/api/v1/alerts/channels/{made.json()['id']}/", timeout=10)


@pytest.mark.browser
@pytest.mark.usefixtures("default_mesh_paused")
def test_an_incident_of_two_paths_names_the_router_they_share(stack: Stack) -> None:
    """Boolean tomography on the real stack: the two degraded paths' only shared element is
    198.18.99.9, and the path that measured normally since crosses their first router and an
    agent of each, so only 198.18.99.9 is named, in the title and on the incident page."""
    http = stack.session()
    try:
        stack.manage("shell", "-c", PLANT_SHARED_ROUTER)

        def incident() -> dict[str, Any] | None:
            rows = http.get(f"{stack.url}/api/v1/alerts/incidents/?status=open", timeout=10).json()
            return next((row for row in rows if "198.18.99.9" in row["title"]), None)

        opened = wait_for("an incident naming the shared router", incident, 60)
        assert opened["title"] == "2 throughput alerts, all through hop 198.18.99.9", opened
        assert opened["cause"] == (
            "hop 198.18.99.9 is on both degraded paths and on no path that measured normally; sys-w1->sys-e2 "
            "measured normally since, through their other agents and routers"
        ), opened
        seen = stack.browser_check("incident-cause", FATHOM_INCIDENT_ID=str(opened["id"]))
        assert seen["cause"] == f"Where: {opened['cause']}", seen
        assert opened["title"] in seen["heading"], seen
    finally:
        stack.remove_agents(*SHARED_ROUTER_AGENTS)
