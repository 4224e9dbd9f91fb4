"""GET /api/v1/analysis/path/timeline/: each run with its ceilings, tuning and iperf3 changes,
ECMP modes and findings over a range, both directions; caps, query counts and bad queries."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any, ClassVar
from unittest import mock

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from analysis.choices import FindingKind, FindingMetric, FindingState
from analysis.models import Finding
from analysis.services.run_analyses import analyze_throughput_run
from analysis.services.sweep_modes import analyze_sweep
from analysis.services.timeline import facts_diff, version_changes
from analysis.tests.services.fixtures import MIB, facts, flow_sweep, ramp_run, snapshot, throughput_run, udp_run
from fathom.testing import FathomTestCase

URL = "/api/v1/analysis/path/timeline/"


def iso(moment: datetime) -> str:
    return moment.isoformat()


def parse(text: str) -> datetime | None:
    return parse_datetime(text)


class PathTimelineApiTests(FathomTestCase):
    ingest_now = None
    now: ClassVar[datetime]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.now = timezone.now()
        hours = [cls.now - timedelta(hours=h) for h in range(10, 0, -1)]
        # frankfurt's receive buffer doubles 5 h ago: the ceilings after it are higher.
        snapshot(cls.athens, hours[0] - timedelta(days=2), facts(6 * MIB))
        snapshot(cls.frankfurt, hours[0] - timedelta(days=2), facts(6 * MIB))
        snapshot(cls.frankfurt, cls.now - timedelta(hours=5, minutes=30), facts(12 * MIB, iperf3="3.16"))
        for at in hours:
            analyze_throughput_run(throughput_run(cls.athens, cls.frankfurt, at, 2.5e9))
        analyze_throughput_run(throughput_run(cls.athens, cls.frankfurt, hours[2], 1e9, reverse=True))
        udp_run(cls.athens, cls.frankfurt, hours[3] + timedelta(minutes=5), 5e8, 4.5e8, 10.0)
        analyze_sweep(flow_sweep(cls.athens, cls.frankfurt, hours[4], 8.0, 12.0))
        Finding.objects.create(
            source=cls.athens, destination=cls.frankfurt, metric=FindingMetric.THROUGHPUT, rules=["fast"],
            kind=FindingKind.ALARM, state=FindingState.OPEN, started_at=hours[6], detected_at=hours[7],
            direction="down", baseline=2.5e9, current=1e9, magnitude=-0.6, unit="relative", evidence={},
        )  # fmt: skip
        Finding.objects.create(
            source=cls.frankfurt, destination=cls.athens, metric=FindingMetric.RTT, rules=["cusum"],
            kind=FindingKind.ALARM, state=FindingState.CLEARED, started_at=cls.now - timedelta(days=3),
            detected_at=cls.now - timedelta(days=3), cleared_at=cls.now - timedelta(days=2), direction="up",
            baseline=8.0, current=12.0, magnitude=4.0, unit="ms", evidence={},
        )  # fmt: skip

    def get(self, **query: str) -> Any:
        params = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk), **query}
        return self.user_client(self.outsider).get(URL, params)

    def test_runs_come_with_their_ceilings_by_direction_and_kind(self) -> None:
        reply = self.get()
        assert reply.status_code == 200, reply.content
        body = reply.json()
        forward, reverse = body["forward"]["runs"], body["reverse"]["runs"]
        assert [run["protocol"] for run in forward].count("udp") == 1
        tcp = [run for run in forward if run["protocol"] == "tcp"]
        assert len(tcp) == 10 and not body["forward"]["runs_capped"]
        assert all(run["streams"] == 1 and not run["paced"] and run["diagnosis"] for run in tcp)
        # The receive-window term follows frankfurt's buffer: it steps up at the retune, 5.5 h ago.
        windows = [run["terms"]["receive_window"] for run in tcp]
        assert len(set(windows[:5])) == 1 and len(set(windows[5:])) == 1, windows
        assert windows[5] > 1.5 * windows[0], windows
        assert [run["t"] for run in forward] == sorted(run["t"] for run in forward)
        udp = next(run for run in forward if run["protocol"] == "udp")
        assert (udp["paced"], udp["rate_bps"], udp["offered_bps"], udp["lost_fraction"]) == (True, 4.5e8, 5e8, 0.1)
        assert udp["diagnosis"] is None and udp["ceiling_bps"] is None
        # iperf3 -R from athens: frankfurt's data reached athens, the reverse direction.
        assert [run["rate_bps"] for run in reverse] == [1e9]

    def test_a_policer_ramp_sits_at_the_rate_it_measured_with_its_steps(self) -> None:
        steps = [(60e6, 60e6, 0.0), (135e6, 90.2e6, 33.2), (200e6, 89.8e6, 55.1)]
        ramp_run(self.athens, self.frankfurt, self.now - timedelta(minutes=30), steps)
        body = self.get().json()
        ramp = next(run for run in body["forward"]["runs"] if run["ramp"] is not None)
        assert (ramp["protocol"], ramp["ramp_lower_bound"]) == ("udp", False)
        assert ramp["rate_bps"] == pytest.approx(90.2e6)
        assert [step["offered_bps"] for step in ramp["ramp"]] == [60e6, 135e6, 200e6]
        assert ramp["ramp"][1] == {"offered_bps": 135e6, "delivered_bps": pytest.approx(90.2e6), "lost_fraction": 0.332}
        assert all(run["ramp"] is None for run in body["forward"]["runs"] if run is not ramp)

    def test_tuning_and_iperf3_changes_carry_their_diff(self) -> None:
        body = self.get().json()
        assert len(body["tuning_changes"]) == 1, body["tuning_changes"]
        change = body["tuning_changes"][0]
        assert change["agent"]["name"] == "frankfurt"
        assert change["changes"]["net.ipv4.tcp_rmem"] == [f"4096 87380 {6 * MIB}", f"4096 87380 {12 * MIB}"]
        assert change["changes"]["iperf3_version"] == ["3.12", "3.16"]
        # The runs all report 3.12 (the fixture's client): no iperf3 change among them.
        assert body["iperf3_changes"] == []

    def test_sweep_modes_and_findings_overlapping_the_range(self) -> None:
        body = self.get(**{"from": iso(self.now - timedelta(days=4))}).json()
        sweep = body["forward"]["sweeps"][0]
        assert sweep["verdict"] == "ecmp"
        assert [round(mode["rtt_ms"]) for mode in sweep["modes"]] == [8, 12]
        assert abs(sum(mode["share"] for mode in sweep["modes"]) - 1) < 1e-9
        found = {(f["metric"], f["path_direction"], f["state"]) for f in body["findings"]}
        assert found == {("throughput", "forward", "open"), ("rtt", "reverse", "cleared")}
        # A day's range misses the RTT finding that cleared two days ago.
        assert [f["metric"] for f in self.get().json()["findings"]] == ["throughput"]

    def test_the_newest_runs_are_kept_and_the_cap_is_said(self) -> None:
        with mock.patch("analysis.services.timeline.RUN_CAP", 4):
            body = self.get().json()
        times = [run["t"] for run in body["forward"]["runs"]]
        assert len(times) == 4 and body["forward"]["runs_capped"] is True
        assert times[-1] == max(run["t"] for run in self.get().json()["forward"]["runs"])
        assert body["reverse"]["runs_capped"] is False

    def test_sweeps_are_thinned_evenly_over_a_long_range(self) -> None:
        """A 2-day range from 23:00 to 23:00 two days later, in the past (away from the fixture's
        sweeps): its sweeps fall on three calendar days, and a cap of 2 still gives 2. Buckets
        at time_bucket's midnight origin gave 3 (CI ran this at 02:15 UTC, when "the last 48 h"
        covered three dates)."""
        midnight = (self.now - timedelta(days=10)).replace(hour=0, minute=0, second=0, microsecond=0)
        start, end = midnight - timedelta(hours=1), midnight + timedelta(hours=47)
        # Two sweeps in the first half (one before midnight), two in the second, on two dates.
        for at in (start + timedelta(minutes=30), midnight + timedelta(hours=2), midnight + timedelta(hours=23.5), end):
            analyze_sweep(flow_sweep(self.athens, self.frankfurt, at, 8.0, 12.0))
        query = {"from": iso(start), "to": iso(end)}
        with mock.patch("analysis.services.timeline.SWEEP_CAP", 2):
            body = self.get(**query).json()
        times = [sweep["t"] for sweep in body["forward"]["sweeps"]]
        assert len(times) == 2 and body["forward"]["sweeps_capped"] is True, times
        # The newest of each half: 02:00 after midnight, and the one at the range's very end.
        assert times == [iso(at).replace("+00:00", "Z") for at in (midnight + timedelta(hours=2), end)]
        uncapped = self.get(**query).json()["forward"]
        assert len(uncapped["sweeps"]) == 4 and not uncapped["sweeps_capped"]

    def test_own_load_is_every_throughput_test_on_either_host_merged_into_spans(self) -> None:
        """Fathom's own tests load a host whatever the other end: a third agent's test to athens
        counts, one between two other agents does not, and overlapping tests are one span."""
        geneva = self.enroll("geneva", "198.18.1.3")[0]
        newyork = self.enroll("newyork", "198.18.1.4")[0]
        at = self.now - timedelta(minutes=90)
        throughput_run(geneva, self.athens, at, 1e9)
        overlapping = throughput_run(self.frankfurt, newyork, at + timedelta(seconds=6), 1e9)
        throughput_run(geneva, newyork, at - timedelta(minutes=20), 1e9)
        body = self.get().json()
        spans = body["own_load"]
        merged = next(span for span in spans if "geneva->athens" in span["tests"])
        tests = ["geneva->athens", "frankfurt->newyork"]
        assert merged["tests"] == tests
        assert (parse(merged["start"]), parse(merged["end"])) == (at, overlapping.ended_at)
        assert not any("geneva->newyork" in span["tests"] for span in spans)
        # The path's own runs count as well: ten of them, an hour apart.
        assert sum("athens->frankfurt" in span["tests"] for span in spans) >= 10
        assert [span["start"] for span in spans] == sorted(span["start"] for span in spans)
        assert body["own_load_capped"] is False

    def test_query_count_does_not_grow_with_the_range(self) -> None:
        client = self.user_client(self.outsider)
        path = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk)}
        counts = []
        for span in (timedelta(hours=3), timedelta(days=30), timedelta(days=365)):
            with CaptureQueriesContext(connection) as queries:
                assert client.get(URL, {**path, "from": iso(self.now - span)}).status_code == 200
            counts.append(len(queries.captured_queries))
        assert counts == [counts[0]] * 3, counts

    def test_a_range_without_data_is_empty_lists(self) -> None:
        body = self.get(**{"from": iso(self.now - timedelta(days=20)), "to": iso(self.now - timedelta(days=19))}).json()
        assert (body["forward"]["runs"], body["reverse"]["runs"], body["forward"]["sweeps"]) == ([], [], [])
        assert (body["tuning_changes"], body["iperf3_changes"], body["findings"]) == ([], [], [])

    @override_settings(ROLLUP_DAILY_RETENTION_DAYS=365)
    def test_bad_queries_are_refused_with_the_reason(self) -> None:
        cases: list[tuple[dict[str, str], str, str]] = [
            ({"source": "x"}, "source", "valid UUID"),
            ({"destination": str(uuid.uuid4())}, "destination", "unknown agent"),
            ({"destination": str(self.athens.pk)}, "destination", "two different agents"),
            ({"from": "yesterday"}, "from", "Datetime has wrong format"),
            ({"from": iso(self.now), "to": iso(self.now - timedelta(hours=1))}, "from", "reversed"),
            ({"from": iso(self.now - timedelta(hours=1)), "to": iso(self.now - timedelta(hours=1))}, "from", "empty"),
            ({"from": iso(self.now + timedelta(hours=1)), "to": iso(self.now + timedelta(hours=2))}, "from", "future"),
            ({"from": iso(self.now - timedelta(days=1600))}, "from", "longer than 1500 days"),
            ({"from": iso(self.now - timedelta(days=400))}, "from", "daily rollups go back 365 days"),
            ({"limit": "10"}, "limit", "unknown field"),
        ]
        for query, field, message in cases:
            with self.subTest(query=query):
                reply = self.get(**query)
                assert reply.status_code == 400, reply.content
                assert message in " ".join(reply.json()[field]), reply.json()

    def test_anonymous_is_refused(self) -> None:
        reply = self.client.get(URL, {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk)})
        assert reply.status_code in (401, 403)


def test_facts_diff_names_each_changed_sysctl_and_interface() -> None:
    old = {"kernel": "6.1", "sysctls": {"a": "1", "b": "2"}, "interfaces": [{"name": "eth0", "mtu": 1500}]}
    new = {"kernel": "6.1", "sysctls": {"a": "1", "c": "3"}, "interfaces": [{"name": "eth0", "mtu": 9000}]}
    assert facts_diff(old, new) == {"b": ["2", None], "c": [None, "3"], "interfaces.eth0.mtu": [1500, 9000]}
    assert facts_diff(old, old) == {}
    # Garbled reports diff as empty ones, never raise.
    assert facts_diff("garbled", {"interfaces": "x", "sysctls": []}) == {}


def test_version_changes_follow_each_client() -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    t = timezone.now()
    points = [
        {"t": t, "client": a, "iperf3_version": "3.12"},
        {"t": t + timedelta(hours=1), "client": b, "iperf3_version": "3.16"},
        {"t": t + timedelta(hours=2), "client": a, "iperf3_version": ""},
        {"t": t + timedelta(hours=3), "client": a, "iperf3_version": "3.16"},
    ]
    assert version_changes(points) == [{"t": t + timedelta(hours=3), "agent": a, "old": "3.12", "new": "3.16"}]


def test_an_interface_recreated_under_a_new_name_is_no_change() -> None:
    # The lab rebuilt: same addresses, MTU and speed; new names and link-local addresses.
    old = {"interfaces": [{"name": "fla22al0a", "mtu": 9000, "speed_mbps": 10000,
                           "addresses": ["198.18.1.1/32", "fe80::ca03:cc04:1c12:779/64"]}]}  # fmt: skip
    new = {"interfaces": [{"name": "fl1419l0a", "mtu": 9000, "speed_mbps": 10000,
                           "addresses": ["198.18.1.1/32", "fe80::7bbf:20c4:c25b:3cbc/64"]}]}  # fmt: skip
    assert facts_diff(old, new) == {}
    new["interfaces"][0]["mtu"] = 1500
    assert facts_diff(old, new) == {"interfaces.fl1419l0a.mtu": [9000, 1500]}
