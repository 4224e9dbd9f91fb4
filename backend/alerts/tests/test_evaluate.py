"""The evaluation tick end to end on the database: lifecycle, grouping, silences,
inhibition and the notification timers (Alertmanager's group wait, interval and repeat)."""

from __future__ import annotations

import uuid
from datetime import time, timedelta
from typing import ClassVar

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from alerts.choices import AlertState, DeliveryStatus, IncidentStatus
from alerts.models import Alert, Delivery, Incident, IncidentEvent, Rule, Silence
from alerts.services import messages
from alerts.services.evaluate import IncidentStateError, acknowledge, evaluate, resolve
from alerts.tests.helpers import T0, channel, finding, later, rule
from analysis.choices import FindingKind, FindingState
from analysis.models import AnalysisPass, Finding, RunAnalysis
from fathom.testing import FathomTestCase
from inventory.models import Agent
from measurements.models import PathLatestRun, Run, TracePath
from meshes.models import Mesh
from meshes.services.paths import mesh_paths

TIMERS = {"ALERT_GROUP_WAIT_S": 30, "ALERT_GROUP_INTERVAL_S": 300, "ALERT_REPEAT_INTERVAL_S": 4 * 3600}


@override_settings(**TIMERS)
class EvaluateTests(FathomTestCase):
    geneva: ClassVar[Agent]
    newyork: ClassVar[Agent]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.geneva, _ = cls.enroll("geneva", "198.18.3.1")
        cls.newyork, _ = cls.enroll("newyork", "198.18.4.1")

    def setUp(self) -> None:
        self.hook = channel("webhook")
        self.mail = channel("email")

    def kinds(self) -> list[tuple[int, str, str]]:
        return sorted(Delivery.objects.values_list("incident_id", "channel__name", "kind"))

    def test_a_finding_fires_and_is_sent_once_after_the_group_wait(self) -> None:
        finding(self.athens, self.frankfurt)
        tick = evaluate(T0)
        alert = Alert.objects.get()
        assert alert.state == AlertState.FIRING and tick.opened == [alert.incident_id]
        assert "Throughput down 40% on athens->frankfurt" in alert.summary
        assert Delivery.objects.count() == 0, "nothing before the group wait"
        evaluate(later(31))
        assert self.kinds() == [(alert.incident_id, "email", "firing"), (alert.incident_id, "webhook", "firing")]
        for seconds in (60, 600, 3600):
            evaluate(later(seconds))
        assert Delivery.objects.count() == 2, "an unchanged incident is not sent again before the repeat interval"
        evaluate(later(4 * 3600 + 31))
        assert [k for _, _, k in self.kinds()].count("repeat") == 2

    def test_an_annotated_finding_never_pages(self) -> None:
        finding(self.athens, self.frankfurt, kind=FindingKind.ANNOTATION, annotation="tcp_rmem changed on frankfurt")
        evaluate(T0)
        evaluate(later(60))
        assert Alert.objects.count() == 0 and Delivery.objects.count() == 0

    def test_alerts_sharing_an_agent_make_one_incident_and_one_message(self) -> None:
        finding(self.athens, self.frankfurt)
        finding(self.geneva, self.frankfurt, metric="rtt")
        finding(self.frankfurt, self.newyork, metric="loss")
        evaluate(T0)
        evaluate(later(31))
        incident = Incident.objects.get()
        assert incident.alerts.count() == 3
        assert "3 alerts on paths of frankfurt" in incident.title
        delivery = Delivery.objects.get(channel=self.hook)
        assert len(delivery.message["firing"]) == 3

    def test_a_later_alert_is_one_update_at_the_next_group_interval(self) -> None:
        finding(self.athens, self.frankfurt)
        evaluate(T0)
        evaluate(later(31))
        finding(self.geneva, self.frankfurt, metric="rtt", at=later(60))
        evaluate(later(60))
        assert Incident.objects.count() == 1 and Delivery.objects.filter(kind="update").count() == 0
        evaluate(later(31 + 299))
        assert Delivery.objects.filter(kind="update").count() == 0, "not before the group interval"
        evaluate(later(31 + 300))
        update = Delivery.objects.get(kind="update", channel=self.hook)
        assert update.message["changes"] == "1 new" and len(update.message["firing"]) == 2

    def test_a_path_that_got_faster_does_not_page_as_a_regression(self) -> None:
        # The slow rule reports rises too (a recovery above a baseline measured on a busy
        # host); the default rule is scoped to drops, so only the drop below raises an alert.
        finding(self.athens, self.frankfurt, direction="up", baseline=1.7e8, current=2.0e8, magnitude=0.18)
        evaluate(T0)
        assert Alert.objects.count() == 0 and Incident.objects.count() == 0
        finding(self.geneva, self.frankfurt)
        evaluate(later(31))
        assert Alert.objects.get().rule.name == "Throughput regression"

    def test_unrelated_paths_are_separate_incidents(self) -> None:
        finding(self.athens, self.frankfurt)
        finding(self.geneva, self.newyork, metric="rtt")
        evaluate(T0)
        assert Incident.objects.count() == 2

    def test_a_cleared_finding_resolves_after_the_hold_time_with_one_message(self) -> None:
        found = finding(self.athens, self.frankfurt)
        evaluate(T0)
        evaluate(later(31))
        Rule.objects.filter(pk=rule("Throughput regression").pk).update(hold_s=600)
        found.state, found.cleared_at = FindingState.CLEARED, later(100)
        found.save()
        evaluate(later(100))
        assert Alert.objects.get().state == AlertState.FIRING, "held while the condition is clear for less than hold_s"
        evaluate(later(31 + 600))
        alert = Alert.objects.get()
        assert alert.state == AlertState.RESOLVED
        assert Incident.objects.get().status == IncidentStatus.RESOLVED
        for seconds in (700, 1000, 5000):
            evaluate(later(seconds))
        assert Delivery.objects.filter(kind="resolved").count() == 2, "one resolved message per channel, once"

    def test_a_condition_shorter_than_the_pending_period_sends_nothing(self) -> None:
        Rule.objects.filter(name="Throughput regression").update(pending_s=300)
        found = finding(self.athens, self.frankfurt)
        evaluate(T0)
        assert Alert.objects.get().state == AlertState.PENDING
        found.state = FindingState.CLEARED
        found.save()
        evaluate(later(120))
        evaluate(later(1000))
        assert Alert.objects.get().state == AlertState.RESOLVED
        assert Incident.objects.count() == 0 and Delivery.objects.count() == 0

    def test_a_silenced_alert_is_recorded_and_not_delivered(self) -> None:
        Silence.objects.create(
            matchers=[{"name": "path", "op": "=", "value": "athens->frankfurt"}],
            starts_at=T0 - timedelta(hours=1), ends_at=T0 + timedelta(hours=1), created_by="owner",
            comment="fibre works",
        )  # fmt: skip
        finding(self.athens, self.frankfurt)
        finding(self.geneva, self.newyork, metric="rtt")
        evaluate(T0)
        evaluate(later(31))
        silenced = Alert.objects.get(labels__path="athens->frankfurt")
        assert silenced.silenced and silenced.state == AlertState.FIRING
        assert Delivery.objects.filter(incident=silenced.incident).count() == 0
        assert Delivery.objects.exclude(incident=silenced.incident).count() == 2
        assert IncidentEvent.objects.filter(incident=silenced.incident, kind="alert_silenced").exists()
        # When the silence ends, the still-firing alert is notified at the next tick.
        evaluate(later(3601))
        assert Delivery.objects.filter(incident=silenced.incident, kind="firing").count() == 2

    def test_agent_down_holds_back_its_paths_alerts(self) -> None:
        Agent.objects.filter(pk=self.frankfurt.pk).update(last_seen_at=T0 - timedelta(minutes=10))
        Agent.objects.filter(pk=self.athens.pk).update(last_seen_at=T0)
        finding(self.athens, self.frankfurt)
        evaluate(T0)
        evaluate(later(31))
        incident = Incident.objects.get()
        assert incident.group_key == "agent:frankfurt"
        path_alert = Alert.objects.get(rule__kind="finding")
        assert path_alert.inhibited and path_alert.incident == incident
        message = Delivery.objects.get(channel=self.hook).message
        assert [a["rule"] for a in message["firing"]] == ["Agent down"]

    def traced(self, source: Agent, destination: Agent, *routers: str, flow: int = 0) -> None:
        """A trace flow of the path through these routers, then its far end."""
        hops = [{"ttl": ttl, "probes": [{"address": address, "rtt_ms": float(ttl)}]}
                for ttl, address in enumerate([*routers, destination.address], start=1)]  # fmt: skip
        TracePath.objects.create(
            time=later(-600), run_id=uuid.uuid4(), flow=flow, source_id=source.pk, destination_id=destination.pk,
            src_port=31000, reached=True, fingerprint=uuid.uuid4().hex[:16], hop_count=len(hops), hops=hops,
        )  # fmt: skip

    def measured(self, source: Agent, destination: Agent, test_type: str, at: float, runs: int = 3) -> None:
        """The path's newest run of the test at `at` s after T0; for throughput, `runs` analysed
        runs a second apart up to then; for pings, an analysis pass just after."""
        PathLatestRun.objects.update_or_create(
            source=source, destination=destination, test_type=test_type,
            defaults={"run_id": uuid.uuid4(), "started_at": later(at), "status": "ok"},
        )  # fmt: skip
        if test_type in ("ping", "latency"):
            AnalysisPass.objects.update_or_create(pk=1, defaults={"judged_at": later(at + 1)})
        for index in range(runs if test_type == "throughput" else 0):
            RunAnalysis.objects.create(
                run_id=uuid.uuid4(), started_at=later(at - index), source=source, destination=destination, streams=1,
                rate_bps=3e9, ceiling_bps=4e9, limit="receive_window", diagnosis="receive_window", ceilings={},
                inputs={}, interval_stats={}, evidence={},
            )  # fmt: skip

    def test_an_incident_names_the_router_its_degraded_paths_share_and_healthy_ones_do_not(self) -> None:
        self.traced(self.athens, self.frankfurt, "198.18.50.1", "198.18.99.9")
        self.traced(self.geneva, self.newyork, "198.18.60.1", "198.18.99.9")
        self.traced(self.frankfurt, self.geneva, "198.18.50.1", "198.18.70.7")  # athens' first router, not .99.9
        self.measured(self.frankfurt, self.geneva, "throughput", at=120)
        finding(self.athens, self.frankfurt)
        finding(self.geneva, self.newyork)
        evaluate(later(60))
        incident = Incident.objects.get()
        assert incident.alerts.count() == 2, "same mesh and metric: one incident"
        assert incident.title == "2 throughput alerts, all through hop 198.18.99.9"
        assert incident.cause == (
            "hop 198.18.99.9 is on both degraded paths and on no path that measured normally; frankfurt->geneva "
            "measured normally since, through their other agents and routers"
        )
        assert IncidentEvent.objects.filter(incident=incident, kind="localised", text=incident.cause).exists()
        evaluate(later(91))
        assert Delivery.objects.get(channel=self.hook).message["cause"] == incident.cause

    def test_one_way_loss_on_two_paths_names_their_router_cleared_by_a_latency_session(self) -> None:
        """A latency session measures both directions: geneva's session towards frankfurt,
        normal since, clears frankfurt -> geneva's agents and routers too."""
        self.traced(self.athens, self.frankfurt, "198.18.50.1", "198.18.99.9")
        self.traced(self.geneva, self.newyork, "198.18.60.1", "198.18.99.9")
        self.traced(self.frankfurt, self.geneva, "198.18.50.1", "198.18.70.7")
        self.measured(self.geneva, self.frankfurt, "latency", at=60 + 4 * 300 + 1)
        finding(self.athens, self.frankfurt, metric="one_way_loss")
        finding(self.geneva, self.newyork, metric="one_way_loss")
        evaluate(later(1300))
        assert not Incident.objects.exists(), "pending for the rule's 5 minutes"
        evaluate(later(1601))
        incident = Incident.objects.get()
        assert incident.title == "2 one-way loss alerts, all through hop 198.18.99.9"
        assert incident.cause.startswith("hop 198.18.99.9 is on both degraded paths and on no path that measured")
        assert "frankfurt->geneva, geneva->frankfurt measured normally since" in incident.cause

    def test_findings_of_paths_with_no_agent_in_common_join_through_a_router_no_healthy_path_crosses(self) -> None:
        Mesh.objects.update(enabled=False)  # no mesh in common either: only the router joins them
        self.traced(self.athens, self.frankfurt, "198.18.99.9")
        self.traced(self.geneva, self.newyork, "198.18.99.9")
        finding(self.athens, self.frankfurt)
        finding(self.geneva, self.newyork)
        evaluate(T0)
        assert Incident.objects.count() == 1

    def test_a_router_a_healthy_path_crosses_does_not_join_two_findings(self) -> None:
        Mesh.objects.update(enabled=False)
        self.traced(self.athens, self.frankfurt, "198.18.99.9")
        self.traced(self.geneva, self.newyork, "198.18.99.9")
        self.traced(self.newyork, self.athens, "198.18.99.9")  # a core router every path crosses
        self.measured(self.newyork, self.athens, "throughput", at=30)
        finding(self.athens, self.frankfurt)
        finding(self.geneva, self.newyork)
        evaluate(later(60))
        assert Incident.objects.count() == 2

    def test_the_routers_of_one_links_ecmp_members_are_named_together(self) -> None:
        for source, destination in ((self.athens, self.frankfurt), (self.geneva, self.newyork)):
            self.traced(source, destination, "198.18.99.8", flow=0)  # one ECMP member per flow
            self.traced(source, destination, "198.18.99.9", flow=1)
        self.traced(self.frankfurt, self.geneva, "198.18.70.7")
        self.measured(self.frankfurt, self.geneva, "throughput", at=120)
        finding(self.athens, self.frankfurt)
        finding(self.geneva, self.newyork)
        evaluate(later(60))
        incident = Incident.objects.get()
        assert incident.title == "2 throughput alerts, all through hop 198.18.99.8 and hop 198.18.99.9"
        assert incident.cause.startswith("hop 198.18.99.8 and hop 198.18.99.9 are on both degraded paths")

    def test_grouping_many_findings_reads_each_paths_facts_once(self) -> None:
        """Many findings in one tick on paths that share nothing: each new alert is compared
        with every earlier one, and the paths' facts are read once a tick (PathFacts), not
        once a comparison (16 findings: 120 comparisons)."""
        Mesh.objects.update(enabled=False)
        for i in range(16):
            source = self.enroll(f"west{i}", f"198.18.7.{i + 1}")[0]
            destination = self.enroll(f"east{i}", f"198.18.8.{i + 1}")[0]
            self.traced(source, destination, f"198.18.99.{i + 1}")
            finding(source, destination)
        with CaptureQueriesContext(connection) as queries:
            evaluate(T0)
        assert Incident.objects.count() == 16
        # About 24 a finding: 18 for writing its alert, incident and events, 6 for what else
        # changed in its moment (read once, when the alert opens); comparing each with the
        # earlier ones read every path's traces again: 495 in all.
        assert len(queries) < 26 * 16, len(queries)

    def test_with_no_path_measured_since_the_shared_router_is_not_yet_named_the_cause(self) -> None:
        self.traced(self.athens, self.frankfurt, "198.18.99.9")
        self.traced(self.geneva, self.newyork, "198.18.99.9")
        self.measured(self.frankfurt, self.geneva, "throughput", at=-3600)  # before the change
        finding(self.athens, self.frankfurt)
        finding(self.geneva, self.newyork)
        evaluate(T0)
        incident = Incident.objects.get()
        assert incident.title == "2 alerts (2 throughput)"
        assert "no path sharing anything with them has measured normally since" in incident.cause

    def test_a_shared_agent_whose_other_path_measured_normally_does_not_join_two_alerts(self) -> None:
        """A real cut on athens -> geneva is no part of an RTT step on athens -> frankfurt
        when athens -> newyork measured throughput normally since (the false RTT incident of
        issue 31 absorbed a real cut on another of the agent's paths this way)."""
        finding(self.athens, self.frankfurt, metric="rtt")
        evaluate(T0)
        self.measured(self.athens, self.newyork, "throughput", at=120)
        finding(self.athens, self.geneva, at=later(60))
        evaluate(later(180))
        assert Incident.objects.count() == 2
        # Without a healthy path of athens since, the shared agent still groups them.
        PathLatestRun.objects.all().delete()
        Incident.objects.all().delete()
        Alert.objects.all().delete()
        evaluate(later(240))
        assert Incident.objects.count() == 1

    def test_a_path_that_has_not_had_the_runs_to_decide_clears_nothing(self) -> None:
        """The first lab soak: a cut on two of ta's paths became two incidents, because the
        second cut path, one run into its own drop and without its finding yet, cleared ta.
        A path clears an agent only after the runs its rule needs (three), or the RTT
        windows the CUSUM needs."""
        finding(self.athens, self.frankfurt, metric="rtt")  # another metric: the mesh alone does not join them
        evaluate(T0)
        self.measured(self.athens, self.newyork, "throughput", at=120, runs=2)
        finding(self.athens, self.geneva, at=later(60))
        evaluate(later(180))
        assert Incident.objects.count() == 1, "two runs since decide nothing"
        Incident.objects.all().delete()
        Alert.objects.all().delete()
        self.measured(self.athens, self.newyork, "throughput", at=130, runs=1)
        evaluate(later(240))
        assert Incident.objects.count() == 2, "the third run clears athens"
        # Pings: healthy only once the windows the CUSUM needs have passed and been judged.
        Incident.objects.all().delete()
        Alert.objects.all().delete()
        Finding.objects.all().delete()
        RunAnalysis.objects.all().delete()
        PathLatestRun.objects.all().delete()
        finding(self.athens, self.frankfurt)
        finding(self.athens, self.geneva, metric="rtt", at=later(60))
        self.measured(self.athens, self.newyork, "ping", at=60 + 3 * 300)
        evaluate(later(1000))
        assert Incident.objects.count() == 1, "three windows after the window of the change: not yet decided"
        Incident.objects.all().delete()
        Alert.objects.all().delete()
        self.measured(self.athens, self.newyork, "ping", at=60 + 4 * 300 + 1)
        evaluate(later(1300))
        assert Incident.objects.count() == 2

    def test_route_changes_through_one_new_hop_are_one_incident(self) -> None:
        old_hops = [{"ttl": 1, "probes": [{"address": "198.18.100.1", "rtt_ms": 1.0}]}]
        new_hops = [{"ttl": 1, "probes": [{"address": "198.18.200.1", "rtt_ms": 9.0}]}]
        for index, (source, destination) in enumerate(((self.athens, self.frankfurt), (self.geneva, self.newyork))):
            for flow, (fingerprint, hops) in enumerate((("old", old_hops), ("new", new_hops))):
                TracePath.objects.create(
                    time=T0, run_id=f"00000000-0000-4000-8000-0000000001{index}{flow}", flow=flow,
                    source_id=source.pk, destination_id=destination.pk, src_port=33434, reached=True,
                    fingerprint=f"{fingerprint}-{index}", hop_count=1, hops=hops,
                )  # fmt: skip
            finding(source, destination, metric="route",
                    evidence={"added": [f"new-{index}"], "old_fingerprints": [f"old-{index}"]})  # fmt: skip
        evaluate(T0)
        incident = Incident.objects.get()
        assert incident.alerts.count() == 2
        assert incident.title == "2 route changes through 198.18.200.1"
        assert Alert.objects.filter(labels__hop=["198.18.200.1"]).count() == 2

    def test_an_alert_says_what_else_changed_when_its_finding_began(self) -> None:
        """The RTT step's alert names the route change of the same minute (read once, when the
        alert opens) and the message shows it beside the figures."""
        TracePath.objects.create(
            time=T0, run_id="00000000-0000-4000-8000-000000000301", flow=0, source_id=self.athens.pk,
            destination_id=self.frankfurt.pk, src_port=33434, reached=True, fingerprint="new", hop_count=1,
            hops=[{"ttl": 1, "probes": [{"address": "198.18.200.1", "rtt_ms": 9.0}]}],
        )  # fmt: skip
        finding(self.athens, self.frankfurt, metric="route", at=later(-60), kind=FindingKind.ANNOTATION,
                evidence={"added": ["new"], "old_fingerprints": []})  # fmt: skip
        finding(self.athens, self.frankfurt, metric="rtt")
        evaluate(T0)
        alert = Alert.objects.get(labels__metric="rtt")
        expected = "Route changed on athens → frankfurt (1 new route), through 198.18.200.1"
        assert alert.evidence["also_changed"] == expected
        assert ("also changed", expected) in messages.evidence_lines(alert.evidence)
        evaluate(later(60))  # kept, not read again
        alert.refresh_from_db()
        assert alert.evidence["also_changed"] == expected

    def failed_pings(self, test_id: str) -> None:
        for index in range(3):
            Run.objects.create(
                id=f"00000000-0000-4000-8000-00000000000{index}", started_at=later(-300 * (3 - index)),
                ended_at=later(-300 * (3 - index) + 10), source_id=self.athens.pk, destination_id=self.frankfurt.pk,
                target="198.18.2.1", test_type="ping", test_id=test_id, status="failed",
                error="ping: sendmsg: Network is unreachable",
            )  # fmt: skip

    def test_no_data_names_the_reasons(self) -> None:
        planned = next(
            p.test_id for p in mesh_paths() if p.source == self.athens and p.destination == self.frankfurt
            and p.test.test_type == "ping"
        )  # fmt: skip
        self.failed_pings(planned)
        evaluate(T0)
        alert = Alert.objects.get(rule__kind="no_data")
        assert "3 of the last 3 ping runs failed on athens->frankfurt" in alert.summary
        assert alert.evidence["reasons"] == ["ping: sendmsg: Network is unreachable"]

    def test_a_test_no_longer_planned_is_no_no_data(self) -> None:
        self.failed_pings("paused-mesh/ping:" + str(self.frankfurt.pk))
        evaluate(T0)
        assert not Alert.objects.filter(rule__kind="no_data").exists()

    def test_an_outage_does_not_pull_the_far_ends_other_alerts_into_its_incident(self) -> None:
        Agent.objects.filter(pk=self.frankfurt.pk).update(last_seen_at=T0 - timedelta(minutes=10))
        finding(self.athens, self.frankfurt)
        evaluate(T0)
        held = Alert.objects.get(rule__kind="finding")
        assert held.inhibited and held.labels["held_by"] == ["frankfurt"]
        finding(self.athens, self.geneva, metric="rtt")
        evaluate(later(5))
        geneva = Alert.objects.get(labels__path="athens->geneva")
        assert geneva.incident_id != held.incident_id, "athens's own RTT step is not frankfurt's outage"

    def test_acknowledged_incidents_do_not_repeat_but_resolve(self) -> None:
        found = finding(self.athens, self.frankfurt)
        evaluate(T0)
        evaluate(later(31))
        incident = Incident.objects.get()
        acknowledge(incident, self.operator, "on it", later(40))
        with pytest.raises(IncidentStateError):
            acknowledge(incident, self.operator, "again", later(41))
        evaluate(later(5 * 3600))
        assert Delivery.objects.filter(kind="repeat").count() == 0
        found.state = FindingState.CLEARED
        found.save()
        evaluate(later(6 * 3600))
        assert Delivery.objects.filter(kind="resolved").count() == 2
        events = list(IncidentEvent.objects.filter(incident=incident).values_list("kind", flat=True))
        assert events[:3] == ["opened", "alert_firing", "notified"] and "acknowledged" in events

    def test_resolving_by_hand_ends_its_alerts_and_a_persisting_condition_reopens(self) -> None:
        finding(self.athens, self.frankfurt)
        evaluate(T0)
        evaluate(later(31))
        first = Incident.objects.get()
        resolve(first, self.operator, "fixed the NIC", later(60))
        evaluate(later(61))
        assert Delivery.objects.filter(incident=first, kind="resolved").count() == 2
        assert Incident.objects.exclude(pk=first.pk).get().status == IncidentStatus.OPEN

    def test_a_channel_matcher_routes_incidents(self) -> None:
        self.mail.matchers = [{"name": "severity", "op": "=", "value": "critical"}]
        self.mail.save()
        finding(self.geneva, self.newyork, metric="rtt")
        evaluate(T0)
        evaluate(later(31))
        assert [name for _, name, _ in self.kinds()] == ["webhook"]

    def test_a_disabled_channel_gets_nothing(self) -> None:
        self.mail.enabled = False
        self.mail.save()
        finding(self.athens, self.frankfurt)
        evaluate(T0)
        evaluate(later(31))
        assert {name for _, name, _ in self.kinds()} == {"webhook"}
        assert Delivery.objects.filter(status=DeliveryStatus.PENDING).count() == 1


class RecurringSilenceTests(FathomTestCase):
    def test_a_weekly_window_honours_its_zone_and_exclusive_end(self) -> None:
        from alerts.silences import is_active, state

        window = Silence(
            matchers=[], starts_at=T0 - timedelta(days=30), ends_at=T0 + timedelta(days=30), created_by="o",
            comment="Saturday maintenance", weekdays=[6], window_start=time(22, 0), window_end=time(2, 0),
            time_zone="Europe/Athens",
        )  # fmt: skip
        # 2026-11-21 is a Saturday; Athens is UTC+2 in November.
        saturday_late = T0.replace(day=21, hour=20, minute=30)  # 22:30 in Athens
        sunday_early = T0.replace(day=21, hour=23, minute=59)  # 01:59 Sunday in Athens
        sunday_end = T0.replace(day=22, hour=0, minute=0)  # 02:00 Sunday: the end, exclusive
        assert is_active(window, saturday_late) and is_active(window, sunday_early)
        assert not is_active(window, sunday_end) and state(window, sunday_end) == "scheduled"
        assert state(window, T0 + timedelta(days=31)) == "expired"
        assert state(window, T0 - timedelta(days=31)) == "pending"
        assert timezone.is_aware(saturday_late)

    def test_a_cron_window_is_active_in_its_zone(self) -> None:
        from alerts.silences import is_active

        window = Silence(
            matchers=[], starts_at=T0 - timedelta(days=30), ends_at=T0 + timedelta(days=30), created_by="o",
            comment="Sunday 02:00 Athens, 2 h", cron="0 2 * * 0", duration_s=7200, time_zone="Europe/Athens",
        )  # fmt: skip
        assert is_active(window, T0.replace(day=22, hour=0, minute=30))  # 02:30 Sunday in Athens
        assert not is_active(window, T0.replace(day=22, hour=2, minute=0))  # 04:00: ended
