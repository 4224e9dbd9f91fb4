from __future__ import annotations

from datetime import UTC, timedelta
from typing import Any

from django.utils import timezone

from fathom.testing import FathomTestCase
from inventory.models import Agent, HostFactsSnapshot

FACTS_URL = "/api/v1/agent/host-facts/"
FACTS: dict[str, Any] = {
    "collected_at": "2026-11-22T10:00:00Z",
    "agent_version": "0.2.0",
    "hostname": "athens",
    "kernel": "6.1.0-18-amd64",
    "os": "Debian GNU/Linux 12 (bookworm)",
    "cpus": 8,
    "iperf3_version": "3.12",
    "iperf3_port": 5201,
    "interfaces": [{"name": "eth0", "mtu": 9000, "speed_mbps": 10000, "addresses": ["198.18.1.1/24"]}],
    "sysctls": {"net.ipv4.tcp_rmem": "4096 131072 6291456", "net.ipv4.tcp_adv_win_scale": "1"},
}


class AgentAuthTests(FathomTestCase):
    def test_wrong_secret_unknown_agent_and_malformed_header_get_401(self) -> None:
        for header in (
            f"Agent {self.athens.pk}:wrong",
            "Agent 00000000-0000-0000-0000-000000000000:x",
            "Agent not-a-uuid:x",
            f"Agent {self.athens.pk}",
        ):
            reply = self.client.get("/api/v1/agent/plan/", HTTP_AUTHORIZATION=header)
            assert reply.status_code == 401, header
            assert reply["WWW-Authenticate"] == "Agent"

    def test_revoked_agent_is_refused(self) -> None:
        reply = self.user_client(self.operator).post(f"/api/v1/agents/{self.athens.pk}/revoke/")
        assert reply.status_code == 200 and reply.json()["status"]["value"] == "revoked"
        agent = self.agent_client(self.athens, self.athens_credential)
        assert agent.get("/api/v1/agent/plan/").status_code == 401
        assert agent.put(FACTS_URL, FACTS, format="json").status_code == 401
        assert not HostFactsSnapshot.objects.filter(agent=self.athens).exists()

    def test_outsider_cannot_revoke(self) -> None:
        assert self.user_client(self.outsider).post(f"/api/v1/agents/{self.athens.pk}/revoke/").status_code == 403

    def test_credentials_and_sessions_do_not_cross(self) -> None:
        agent = self.agent_client(self.athens, self.athens_credential)
        assert agent.get("/api/v1/agents/").status_code == 403
        assert agent.get("/api/v1/paths/").status_code == 403
        user = self.user_client(self.owner)
        assert user.get("/api/v1/agent/plan/").status_code == 401
        assert user.post("/api/v1/agent/results/", {}, format="json").status_code == 401

    def test_requests_update_last_seen(self) -> None:
        assert self.athens.last_seen_at is None
        self.agent_client(self.athens, self.athens_credential).get("/api/v1/agent/plan/")
        self.athens.refresh_from_db()
        assert self.athens.last_seen_at is not None


class AgentStateTests(FathomTestCase):
    """Fathom-Agent-Time and Fathom-Spool, as the Go client sends them (agents/internal/api)."""

    def plan(self, headers: dict[str, str] | None = None) -> int:
        """The plan fetched with these request headers."""
        client = self.agent_client(self.athens, self.athens_credential)
        status: int = client.get("/api/v1/agent/plan/", headers=headers or {}).status_code
        Agent.objects.filter(pk=self.athens.pk).update(last_seen_at=None)  # the next request writes again
        self.athens.refresh_from_db()
        return status

    def test_the_clock_offset_and_spool_are_read_from_every_request(self) -> None:
        ahead = (timezone.now() + timedelta(seconds=42)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert self.plan({"Fathom-Agent-Time": ahead, "Fathom-Spool": "results=12, bytes=48211"}) == 200
        assert self.athens.clock_offset_s is not None and 41.0 < self.athens.clock_offset_s <= 42.0
        assert (self.athens.spool_results, self.athens.spool_bytes) == (12, 48211)
        listed = self.user_client(self.outsider).get(f"/api/v1/agents/{self.athens.pk}/").json()
        assert listed["spool_results"] == 12 and 41.0 < listed["clock_offset_s"] <= 42.0
        # An agent that no longer says (an older one put back) has nothing shown, not stale figures.
        assert self.plan() == 200
        said: tuple[Any, ...] = (self.athens.clock_offset_s, self.athens.spool_results, self.athens.spool_bytes)
        assert said == (None, None, None)

    def test_malformed_headers_are_left_out_and_the_request_still_served(self) -> None:
        for time_header, spool_header in (
            ("yesterday", "results=12"),
            ("2026-12-04T10:00:00", "results=-1, bytes=3"),  # no zone: not a moment
            ("1999-01-01T00:00:00Z", "results=1, bytes=2, extra=3"),  # over a year off: broken
            ("2026-13-40T99:00:00Z", "results=" + "9" * 40 + ", bytes=1"),
            ("\x00", "bytes=1, results=1"),
        ):
            assert self.plan({"Fathom-Agent-Time": time_header, "Fathom-Spool": spool_header}) == 200
            assert (self.athens.clock_offset_s, self.athens.spool_results) == (None, None), (time_header, spool_header)


class HostFactsTests(FathomTestCase):
    def test_history_row_only_on_change(self) -> None:
        agent = self.agent_client(self.athens, self.athens_credential)
        assert agent.put(FACTS_URL, FACTS, format="json").json() == {"changed": True}
        later = {**FACTS, "collected_at": "2026-11-22T11:00:00Z"}
        assert agent.put(FACTS_URL, later, format="json").json() == {"changed": False}
        tuned = {**later, "sysctls": {**FACTS["sysctls"], "net.ipv4.tcp_rmem": "4096 131072 16777216"}}
        assert agent.put(FACTS_URL, tuned, format="json").json() == {"changed": True}
        assert HostFactsSnapshot.objects.filter(agent=self.athens).count() == 2
        self.athens.refresh_from_db()
        assert self.athens.host_facts is not None
        assert self.athens.host_facts["sysctls"]["net.ipv4.tcp_rmem"] == "4096 131072 16777216"
        assert self.athens.agent_version == "0.2.0"

    def test_malformed_facts_are_refused_and_change_nothing(self) -> None:
        agent = self.agent_client(self.athens, self.athens_credential)
        cases = [
            {**FACTS, "uptime": 5},
            {**FACTS, "sysctls": {"kernel.panic": "1"}},
            {**FACTS, "cpus": 0},
            {**FACTS, "interfaces": [{"name": "eth0", "mtu": "big"}]},
            {**FACTS, "interfaces": [{"name": "eth0", "duplex": "full"}]},
            {k: v for k, v in FACTS.items() if k != "collected_at"},
        ]
        for body in cases:
            assert agent.put(FACTS_URL, body, format="json").status_code == 400, body
        assert not HostFactsSnapshot.objects.filter(agent=self.athens).exists()
        self.athens.refresh_from_db()
        assert self.athens.host_facts is None


CLOCK: dict[str, Any] = {"synchronized": True, "max_error_ms": 0.4, "source": "kernel", "readable": True}


class HostFactsClockTests(FathomTestCase):
    def test_the_clock_is_stored_and_listed(self) -> None:
        agent = self.agent_client(self.athens, self.athens_credential)
        assert agent.put(FACTS_URL, {**FACTS, "clock": CLOCK}, format="json").status_code == 200
        listed = {a["name"]: a for a in self.user_client(self.outsider).get("/api/v1/agents/").json()}
        assert listed["athens"]["host_facts"]["clock"] == CLOCK
        unknown = {"synchronized": False, "max_error_ms": None, "source": "kernel", "readable": False}
        assert agent.put(FACTS_URL, {**FACTS, "clock": unknown}, format="json").json() == {"changed": True}
        detail = self.user_client(self.outsider).get(f"/api/v1/agents/{self.athens.pk}/").json()
        assert detail["host_facts"]["clock"] == unknown

    def test_facts_without_a_clock_stay_valid(self) -> None:
        agent = self.agent_client(self.athens, self.athens_credential)
        assert agent.put(FACTS_URL, FACTS, format="json").status_code == 200
        self.athens.refresh_from_db()
        assert self.athens.host_facts is not None and "clock" not in self.athens.host_facts

    def test_the_errors_growth_is_no_change_but_losing_sync_is(self) -> None:
        agent = self.agent_client(self.athens, self.athens_credential)
        assert agent.put(FACTS_URL, {**FACTS, "clock": CLOCK}, format="json").json() == {"changed": True}
        grown = {**FACTS, "collected_at": "2026-11-22T11:00:00Z", "clock": {**CLOCK, "max_error_ms": 0.55}}
        assert agent.put(FACTS_URL, grown, format="json").json() == {"changed": False}
        self.athens.refresh_from_db()
        assert self.athens.host_facts is not None
        assert self.athens.host_facts["clock"]["max_error_ms"] == 0.55, "the agent's row has the latest error"
        lapsed = {**grown, "clock": {**CLOCK, "synchronized": False, "max_error_ms": 0.55}}
        assert agent.put(FACTS_URL, lapsed, format="json").json() == {"changed": True}
        tenfold = {**grown, "clock": {**CLOCK, "max_error_ms": 5.5}}
        assert agent.put(FACTS_URL, tenfold, format="json").json() == {"changed": True}
        assert HostFactsSnapshot.objects.filter(agent=self.athens).count() == 3

    def test_malformed_clocks_are_refused_with_the_field_named_and_change_nothing(self) -> None:
        agent = self.agent_client(self.athens, self.athens_credential)
        cases: list[tuple[Any, str]] = [
            ({**CLOCK, "source": "gps"}, "source"),
            ({**CLOCK, "max_error_ms": -0.1}, "max_error_ms"),
            ({**CLOCK, "max_error_ms": "0.4"}, "max_error_ms"),
            ({**CLOCK, "synchronized": "yes"}, "synchronized"),
            ({**CLOCK, "offset_ms": 2}, "offset_ms"),
            ({k: v for k, v in CLOCK.items() if k != "readable"}, "readable"),
        ]
        for clock, field in cases:
            reply = agent.put(FACTS_URL, {**FACTS, "clock": clock}, format="json")
            assert reply.status_code == 400, clock
            errors = reply.json()["clock"]
            assert list(errors) == [field], (clock, errors)
            assert errors[field] and all(isinstance(message, str) and message for message in errors[field])
        reply = agent.put(FACTS_URL, {**FACTS, "clock": "synchronized"}, format="json")
        assert reply.status_code == 400 and "clock" in reply.json()
        assert not HostFactsSnapshot.objects.filter(agent=self.athens).exists()
        self.athens.refresh_from_db()
        assert self.athens.host_facts is None


class AgentListTests(FathomTestCase):
    def test_status_labels_and_colours(self) -> None:
        Agent.objects.filter(pk=self.athens.pk).update(last_seen_at=timezone.now())
        Agent.objects.filter(pk=self.frankfurt.pk).update(last_seen_at=timezone.now() - timedelta(hours=1))
        listed = {a["name"]: a for a in self.user_client(self.outsider).get("/api/v1/agents/").json()}
        assert listed["athens"]["status"] == {"value": "online", "label": "Online", "color": "#1a7f37"}
        assert listed["frankfurt"]["status"]["value"] == "offline"
        assert "credential_sha256" not in listed["athens"]

    def test_list_query_count_is_flat(self) -> None:
        for index in range(5):
            self.enroll(f"extra-{index}", f"198.18.9.{index}")
        client = self.user_client(self.outsider)
        with self.assertNumQueries(3):  # session, user, agents
            assert client.get("/api/v1/agents/").status_code == 200

    def test_anonymous_is_refused(self) -> None:
        assert self.client.get("/api/v1/agents/").status_code == 403
