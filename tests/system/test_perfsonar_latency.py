"""A perfSONAR node's one-way delay on a mixed path's page (issue 36), on the real stack: a fake
pScheduler node (tests/fakes/pscheduler) is registered, a published mesh gives it a latency test
towards the Fathom agent sys-a, and the node, subscribed to the mesh's pSConfig template, archives
its latencybg reports to Fathom as pScheduler's http archiver does. The reports replay a real
pScheduler latencybg result (backend/perfsonar/tests/fixtures/archive-latencybg.json, around the
result of pScheduler's own result-format test) moved to the last minutes: five consecutive 60 s
reports, one of them malformed, which is refused alone while the others are stored. The path's
latency series then carries the result's forward figures, with no way back (OWAMP measures one
way), and the path page draws them as its one-way rows."""

from __future__ import annotations

import copy
import json
import math
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fakes.pscheduler import FakePScheduler
from fakes.pscheduler.archiver import archive_json_body, deliver

from .conftest import ARTIFACTS, ROOT, SYSTEST_NET, Stack, wait_for

NODE = "ps-porto"
NODE_HOSTNAME = "ps-porto.example.net"
# Not test_perfsonar_ui's node address: that node's agent row stays (decommissioned) in the
# session's database.
NODE_ADDRESS = f"{SYSTEST_NET}.11"
MESH = "ps-owd"
TEST = "owd"
REPORT_S = 60  # a latencybg report: 600 packets 0.1 s apart
FIXTURES = ROOT / "backend" / "perfsonar" / "tests" / "fixtures"
# Where the fixture's node and its pair stand in its text.
RECORDED_API = "https://ps-lab.example.net/pscheduler"
RECORDED_HOST = "ps-lab.example.net"
RECORDED_SOURCE, RECORDED_DEST = "198.18.9.1", "198.18.9.2"
MALFORMED = 2  # which of the five reports the node sends malformed
LATENCY_RUNS = "SELECT status, count(*) FROM measurements_run WHERE source_id = %s AND test_type = 'latency' GROUP BY 1"


def nearest_rank_ms(histogram: dict[str, int], percent: int, bucket_width_s: float) -> float:
    """A percentile of a pScheduler delay histogram (keys: delay / bucket width), nearest rank."""
    buckets = sorted((float(key) * bucket_width_s * 1000, count) for key, count in histogram.items())
    rank = math.ceil(percent * sum(count for _, count in buckets) / 100)
    seen = 0
    for delay_ms, count in buckets:
        seen += count
        if seen >= rank:
            return delay_ms
    raise AssertionError("an empty histogram")


def filled(value: Any, variables: dict[str, str]) -> Any:
    """A template value with its `{% name %}` variables filled, as the pSConfig agent fills them."""
    if isinstance(value, str):
        for name, replacement in variables.items():
            value = value.replace(f"{{% {name} %}}", replacement)
        return value
    if isinstance(value, dict):
        return {key: filled(item, variables) for key, item in value.items()}
    if isinstance(value, list):
        return [filled(item, variables) for item in value]
    return value


def latencybg_report(
    recorded: str, api_url: str, sys_a_address: str, task_id: str, test: dict[str, Any],
    reference: dict[str, Any], task_start: datetime, reported: datetime,
) -> dict[str, Any]:  # fmt: skip
    """The recorded archive body as this node sends it for one report: its hrefs, host and pair,
    the task its pSConfig agent made from the template (test and reference), a run of its own
    stamped when powstream reported (start = end), as pScheduler's runner inserts each
    background-multi result."""
    text = recorded.replace(RECORDED_API, api_url).replace(RECORDED_HOST, NODE_HOSTNAME)
    text = text.replace(RECORDED_SOURCE, NODE_ADDRESS).replace(RECORDED_DEST, sys_a_address)
    body: dict[str, Any] = json.loads(text)
    run_id = str(uuid.uuid4())
    task_href = f"{api_url}/tasks/{task_id}"
    stamp, begun = reported.isoformat(), task_start.isoformat()
    body["id"] = run_id
    body["schedule"]["start"] = stamp
    body["test"] = copy.deepcopy(test)
    body["reference"] = copy.deepcopy(reference)
    task = body["task"]
    task.update({"test": copy.deepcopy(test), "reference": copy.deepcopy(reference), "href": task_href})
    task["schedule"] = {"start": begun, "until": (task_start + timedelta(days=1)).isoformat()}
    task["detail"].update({"added": begun, "start": begun})
    for key in ("href", "runs-href", "first-run-href", "next-run-href"):
        task["detail"][key] = task["detail"][key].replace(task["detail"]["href"], task_href)
    body["run"].update({"start-time": stamp, "end-time": stamp, "added": stamp, "task-href": task_href})
    body["run"]["href"] = f"{task_href}/runs/{run_id}"
    return body


def without_a_bucket(body: dict[str, Any]) -> None:
    """A report whose histogram lost a bucket on the way: 599 delays for 600 packets received."""
    for result in (body["result"], body["run"]["result-merged"]):
        del result["histogram-latency"]["88.21"]


@pytest.mark.browser
def test_a_perfsonar_nodes_latencybg_reports_show_on_a_mixed_path(stack: Stack, tmp_path: Path) -> None:
    a = stack.agents[0]
    http = stack.session()
    recorded = (FIXTURES / "archive-latencybg.json").read_text()
    record = json.loads(recorded)
    result, width_s = record["result"], float(record["test"]["spec"]["bucket-width"])
    expected = {
        f"forward_{name}_ms": nearest_rank_ms(result["histogram-latency"], percent, width_s)
        for name, percent in (("p50", 50), ("p90", 90), ("p99", 99))
    }
    assert expected["forward_p50_ms"] == pytest.approx(2.6)  # the 300th of 600 delays, at 1 ms buckets
    # Fathom also gives a node in the mesh its own latency task towards sys-a (twping, see
    # perfsonar/wanted.py), so a registered node that subscribes as well runs the test twice
    # (docs/perfsonar.md). This node has no twping, as toolkits without it have none: it refuses
    # Fathom's task, and the series holds the subscription's reports alone.
    with FakePScheduler(
        speed=1, first_run_delay_s=0.5, hostname=NODE_HOSTNAME, state_dir=tmp_path / "fake-ps", without_tools=["twping"]
    ) as node:
        registered = http.post(
            f"{stack.url}/api/v1/perfsonar/nodes/",
            json={"name": NODE, "api_url": node.base_url, "address": NODE_ADDRESS, "tls_mode": "pinned",
                  "pinned_sha256": node.fingerprint_sha256},
            timeout=60,
        )  # fmt: skip
        assert registered.status_code == 201, registered.text
        assert registered.json()["reachable"] is True, registered.json()
        try:
            node_id = next(row["id"] for row in http.get(f"{stack.url}/api/v1/agents/", timeout=30).json()
                           if row["name"] == NODE)  # fmt: skip
            mesh = {
                "name": MESH,
                "kind": "disjoint",
                "unidirectional": True,  # the node towards sys-a only
                "psconfig_published": True,
                "members": [{"agent": NODE, "side": "a"}, {"agent": a.name, "side": "b"}],
                "tests": [{"name": TEST, "test_type": "latency", "interval_s": REPORT_S, "spec": {}}],
            }
            reply = http.post(f"{stack.url}/api/v1/meshes/", json=mesh, timeout=30)
            assert reply.status_code == 201, reply.text

            # The node subscribes (psconfig remote add, no sign-in) and adds its archive token
            # with the template's transform; its pSConfig agent makes the latencybg task.
            template = http.get(f"{stack.url}/psconfig/{MESH}.json", timeout=30).json()
            assert template["tests"][TEST]["type"] == "latencybg", template["tests"]
            token = http.get(f"{stack.url}/api/v1/perfsonar/nodes/{NODE}/archive-token/", timeout=30).json()
            archive = copy.deepcopy(template["archives"]["fathom"]["data"])
            assert archive["_url"] == token["archive_url"] == f"{stack.url}/api/v1/perfsonar/archive/", archive
            archive["_headers"]["Authorization"] = token["authorization"]
            variables = {
                "address[0]": NODE_ADDRESS,
                "address[1]": a.address,
                "pscheduler_address[0]": template["addresses"][NODE].get("pscheduler-address", NODE_ADDRESS),
                "scheduled_by_address": NODE_ADDRESS,
            }
            archive = filled(archive, variables)
            test = filled({key: value for key, value in template["tests"][TEST].items() if key != "_meta"}, variables)
            reference = template["tasks"][TEST]["reference"]
            assert reference["fathom"] == {"mesh": MESH, "test": TEST}, reference

            def fathoms_latency_tasks() -> list[dict[str, Any]]:
                tasks = http.get(f"{stack.url}/api/v1/perfsonar/nodes/{NODE}/tasks/", timeout=30).json()
                latency = [task for task in tasks if task["test_type"] == "latency"]
                # A task is saved unanswered while its POST is out: wait for the node's answer.
                return [] if any(task["state"] == "unanswered" for task in latency) else latency

            # Refused before the reports come, so the node's last error is then the malformed one's.
            refused = wait_for("Fathom's own latency task refused by the node", fathoms_latency_tasks, 90)
            assert {task["state"] for task in refused} == {"refused"}, refused
            assert all("None of the participants could run this test" in task["reason"] for task in refused), refused

            # Five reports back to back, the last a minute ago; the third arrives malformed.
            now = datetime.now(UTC).replace(microsecond=0)
            reported = [now - timedelta(seconds=REPORT_S * (5 - index)) for index in range(5)]
            task_id = str(uuid.uuid4())
            task_start = reported[0] - timedelta(seconds=REPORT_S + 30)
            reports = [
                latencybg_report(recorded, node.base_url, a.address, task_id, test, reference, task_start, when)
                for when in reported
            ]
            without_a_bucket(reports[MALFORMED])
            deliveries = [deliver(archive, archive_json_body(report), blocked=False) for report in reports]
            statuses = [(delivery.method, delivery.status) for delivery in deliveries]
            assert statuses == [("PUT", 200)] * 2 + [("PUT", 400)] + [("PUT", 200)] * 2, statuses
            refusal = deliveries[MALFORMED].error or ""
            assert "result/histogram-latency: 599 packets, but packets-received says 600" in refusal, refusal
            # The archiver's retry of a stored report is a duplicate: nothing is stored twice.
            assert deliver(archive, archive_json_body(reports[0]), blocked=False).succeeded
            assert dict(stack.query(LATENCY_RUNS, node_id)) == {"ok": 4}
            listed = http.get(f"{stack.url}/api/v1/perfsonar/nodes/{NODE}/", timeout=30).json()
            assert listed["last_push_at"] and "599 packets" in (listed["last_error"] or ""), listed

            # The path's series, one point per stored report (1 s buckets over these minutes).
            series = http.get(
                f"{stack.url}/api/v1/paths/latency/",
                params={"source": node_id, "destination": a.agent_id, "max_points": 1000,
                        "start": (reported[0] - timedelta(minutes=3)).isoformat(),
                        "end": (now + timedelta(minutes=1)).isoformat()},
                timeout=30,
            ).json()  # fmt: skip
            points = series["points"]
            # Each report covers the minute of packets before powstream reported it.
            begun = [when - timedelta(seconds=REPORT_S) for index, when in enumerate(reported) if index != MALFORMED]
            assert [datetime.fromisoformat(point["time"]) for point in points] == begun, points
            for point in points:
                assert point["sent"] == point["answered"] == 600, point
                assert point["forward_lost"] == 0 and point["forward_loss_fraction"] == 0, point
                assert point["forward_min_ms"] == pytest.approx(2.51), point
                assert point["forward_max_ms"] == pytest.approx(88.21), point
                for name, value in expected.items():
                    assert point[name] == pytest.approx(value), (name, point)
                # One way only: no way back and no round trip.
                assert point["backward_lost"] is None and point["backward_loss_fraction"] is None, point
                assert all(point[f"backward_{name}_ms"] is None for name in ("min", "p50", "p90", "p99", "max"))
                assert all(point[f"round_trip_{name}_ms"] is None for name in ("min", "p50", "p99")), point
                # pScheduler's max-clock-error (0.27 ms) is within the server's limit: one-way trusted.
                assert point["clock_error_ms"] == pytest.approx(result["max-clock-error"]), point
                assert point["one_way_trusted"] is True, point

            seen = stack.browser_check(
                "path-perfsonar-latency",
                FATHOM_PATH_URL=f"/paths/{node_id}/{a.agent_id}",
                FATHOM_FORWARD=f"{NODE} → {a.name}",
                FATHOM_REVERSE=f"{a.name} → {NODE}",
                FATHOM_EXPECTED_P50_MS=str(expected["forward_p50_ms"]),
            )
            assert f"{NODE} → {a.name} one-way median" in seen["legend"], seen
            medians = seen["medians"]
            assert medians and all(value == pytest.approx(expected["forward_p50_ms"]) for value in medians), seen
            assert seen["lossPercents"] and set(seen["lossPercents"]) == {0}, seen
            assert seen["reverseMedians"] == [], seen
            # Four reports of 600 packets, none lost, none during a throughput test.
            assert seen["oneWayMedian"] == f"→ {expected['forward_p50_ms']:.2f} ms", seen
            assert seen["oneWayLoss"] == "→ 0 % (of 2400 packets outside Fathom's own tests)", seen

            assert http.delete(f"{stack.url}/api/v1/meshes/{MESH}/", timeout=30).status_code == 204
            removed = http.delete(f"{stack.url}/api/v1/perfsonar/nodes/{NODE}/", timeout=30)
            assert removed.status_code == 202, removed.text

            def listed_nodes() -> set[str]:
                return {row["name"] for row in http.get(f"{stack.url}/api/v1/perfsonar/nodes/", timeout=30).json()}

            # The worker deletes the node's tasks (the default mesh's pings) from it first.
            wait_for("the removed node gone from the list", lambda: NODE not in listed_nodes(), 120)
            # Its results stay.
            assert dict(stack.query(LATENCY_RUNS, node_id)) == {"ok": 4}
        finally:
            http.delete(f"{stack.url}/api/v1/meshes/{MESH}/", timeout=30)
            http.delete(f"{stack.url}/api/v1/perfsonar/nodes/{NODE}/", timeout=30)
    assert (ARTIFACTS / "path-perfsonar-latency.png").stat().st_size > 10_000
