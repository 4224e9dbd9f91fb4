"""GET /api/v1/paths/routes/: a path's routes hop by hop, the routes each trace run saw and
when that set changed; bad input is refused and an unanswered route still reads."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from django.urls import reverse

from fathom.testing import FathomTestCase
from measurements import routes
from measurements.models import TracePath

T0 = datetime.fromisoformat("2026-11-20T12:00:00+00:00")
MEMBER_A = [
    {"ttl": 1, "probes": [{"address": "198.18.128.1", "rtt_ms": 7.9}, {"address": "198.18.128.1", "rtt_ms": 7.8}],
     "hostname": "r1.grnet.example", "asn": 5408, "as_owner": "GRNET", "mtu": 9000},
    {"ttl": 2, "probes": [{"address": "198.18.2.1", "rtt_ms": 8.1}], "mtu": 1500},
]  # fmt: skip
MEMBER_B = [
    {"ttl": 1, "probes": [{"address": "198.18.128.2", "rtt_ms": 11.9}, {"address": "198.18.128.9", "rtt_ms": 12.3}]},
    {"ttl": 2, "probes": [{"address": "198.18.2.1", "rtt_ms": 12.1}]},
]
# MEMBER_A with its first router silent: an ICMP rate limit, not a route of its own.
A_HOP_SILENT = [{"ttl": 1, "probes": [{"address": None, "rtt_ms": None}]}, MEMBER_A[1]]
SILENT = [{"ttl": 1, "probes": [{"address": None, "rtt_ms": None}]}, {"ttl": 2, "probes": []}]


class PathRoutesTests(FathomTestCase):
    def trace(self, minutes: int, members: list[tuple[str, list[dict[str, Any]], int]]) -> None:
        run_id = uuid.uuid4()
        flow = 0
        for fingerprint, hops, flows in members:
            for _ in range(flows):
                TracePath.objects.create(
                    time=T0 + timedelta(minutes=minutes), run_id=run_id, flow=flow, source_id=self.athens.pk,
                    destination_id=self.frankfurt.pk, src_port=33434 + flow, reached=hops is not SILENT,
                    fingerprint=fingerprint, hop_count=len(hops), hops=hops,
                )  # fmt: skip
                flow += 1

    def get(self, **params: str) -> Any:
        query = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk), **params}
        return self.user_client(self.outsider).get(reverse("path-routes"), query)

    def window(self) -> dict[str, str]:
        return {"start": (T0 - timedelta(hours=1)).isoformat(), "end": (T0 + timedelta(hours=2)).isoformat()}

    def test_each_member_hop_by_hop_and_when_the_set_changed(self) -> None:
        self.trace(0, [("fa", MEMBER_A, 12), ("fb", MEMBER_B, 4)])
        self.trace(10, [("fa", MEMBER_A, 16)])
        self.trace(20, [("fa", MEMBER_A, 11), ("fb", MEMBER_B, 5)])
        reply = self.get(**self.window())
        assert reply.status_code == 200, reply.content
        body = reply.json()
        a, b = body["routes"]
        assert (a["label"], a["runs"], a["flows"], a["latest_flows"]) == ("A", 3, 39, 11)
        assert (b["label"], b["runs"], b["latest_flows"], b["path_mtu"]) == ("B", 2, 5, None)
        assert a["path_mtu"] == 1500 and a["unanswered_hops"] == 0
        first = a["hops"][0]
        assert first == {
            "ttl": 1, "address": "198.18.128.1", "other_addresses": [], "rtt_ms": 7.8,
            "hostname": "r1.grnet.example", "asn": 5408, "as_owner": "GRNET", "mtu": 9000,
        }  # fmt: skip
        assert b["hops"][0]["other_addresses"] == ["198.18.128.9"]
        assert [run["flows"] for run in body["runs"]] == [{"A": 12, "B": 4}, {"A": 16}, {"A": 11, "B": 5}]
        assert [(c["added"], c["removed"]) for c in body["changes"]] == [([], ["B"]), (["B"], [])]
        assert body["truncated"] is False

    def test_a_route_with_a_silent_hop_is_the_route_it_fits(self) -> None:
        self.trace(0, [("fa", MEMBER_A, 6), ("fb", MEMBER_B, 2)])
        self.trace(10, [("fa", MEMBER_A, 5), ("fa-silent", A_HOP_SILENT, 3)])
        self.trace(20, [("fa-silent", A_HOP_SILENT, 2)])
        body = self.get(**self.window()).json()
        assert [(route["label"], route["fingerprint"], route["flows"]) for route in body["routes"]] == [
            ("A", "fa", 16),
            ("B", "fb", 2),
        ]
        assert [run["flows"] for run in body["runs"]] == [{"A": 6, "B": 2}, {"A": 8}, {"A": 2}]
        assert body["routes"][0]["unanswered_hops"] == 0

    def test_a_silent_hop_with_no_route_to_fit_stays_a_route(self) -> None:
        self.trace(0, [("fa-silent", A_HOP_SILENT, 2)])
        (route,) = self.get(**self.window()).json()["routes"]
        assert route["fingerprint"] == "fa-silent" and route["unanswered_hops"] == 1

    def test_a_route_no_hop_answered_reads_as_such(self) -> None:
        self.trace(0, [("silent", SILENT, 2)])
        (route,) = self.get(**self.window()).json()["routes"]
        assert route["reached"] is False and route["unanswered_hops"] == 2
        assert [hop["address"] for hop in route["hops"]] == [None, None]
        assert route["hops"][1]["rtt_ms"] is None

    def test_nothing_in_range_is_an_empty_answer(self) -> None:
        self.trace(0, [("fa", MEMBER_A, 1)])
        body = self.get(start=(T0 + timedelta(days=1)).isoformat(), end=(T0 + timedelta(days=2)).isoformat()).json()
        assert body["routes"] == [] and body["runs"] == [] and body["changes"] == []

    def test_the_newest_runs_are_read_when_the_range_holds_more(self) -> None:
        for minutes in range(4):
            self.trace(minutes, [(f"f{minutes}", MEMBER_A, 1)])
        with self.settings():
            original = routes.MAX_RUNS
            routes.MAX_RUNS = 3
            try:
                body = self.get(**self.window()).json()
            finally:
                routes.MAX_RUNS = original
        assert body["truncated"] is True and len(body["runs"]) == 3
        assert [route["fingerprint"] for route in body["routes"]] == ["f1", "f2", "f3"]

    def test_bad_input_is_refused_with_a_reason(self) -> None:
        cases = [
            ({"start": T0.isoformat(), "end": (T0 - timedelta(hours=1)).isoformat()}, "start"),
            ({"start": "yesterday"}, "start"),
            ({"source": "not-a-uuid"}, "source"),
            ({"destination": str(self.athens.pk)}, "destination"),
            ({"hops": "5"}, "hops"),
        ]
        for params, field in cases:
            reply = self.get(**params)
            assert reply.status_code == 400, (params, reply.content)
            assert field in reply.json(), (params, reply.json())
        assert self.get(destination=str(uuid.uuid4())).status_code in (400, 404)

    def test_route_labels_go_on_past_z(self) -> None:
        assert [routes.route_label(index) for index in (0, 25, 26, 27, 701, 702)] == ["A", "Z", "AA", "AB", "ZZ", "AAA"]

    def test_signed_in_only(self) -> None:
        assert self.client.get(reverse("path-routes")).status_code in (401, 403)
