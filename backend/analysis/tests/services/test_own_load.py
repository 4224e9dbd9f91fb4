"""Pings that Fathom's own throughput tests overlapped are flagged as they are stored, and the
rollups (and so the path history's percentile bands and loss) leave them out: through real
ingest, the real hypertables and the real refresh."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.test import override_settings

from fathom.testing import EXAMPLES_RECORDED_AT, FathomTestCase
from history.buckets import MINUTE
from history.models import RttMinute, StaleBucket
from history.refresh import refresh
from history.tests.builders import ingest, ping_result, throughput_result
from inventory.models import Agent
from measurements.choices import TestType as Kind
from measurements.models import PingSample
from meshes.choices import SlotState
from meshes.models import Slot

T0 = EXAMPLES_RECORDED_AT - timedelta(hours=2)  # ingest's clock is EXAMPLES_RECORDED_AT
SECOND = timedelta(seconds=1)
# A minute of pings a second: 20 ms, but 60 ms while a test builds its queue (seconds 20 to 29).
LOADED = range(20, 30)
RTTS: list[float | None] = [60.0 if second in LOADED else 20.0 for second in range(60)]


def flagged(source: Agent, destination: Agent) -> list[int]:
    """The seconds (from T0) of the path's pings flagged as Fathom's own load."""
    times = PingSample.objects.filter(source_id=source.pk, destination_id=destination.pk, own_load=True)
    return sorted(int((time - T0).total_seconds()) for time in times.values_list("time", flat=True))


def minute_row(source: Agent, destination: Agent, at: datetime = T0) -> RttMinute:
    return RttMinute.objects.get(source_id=source.pk, destination_id=destination.pk, bucket=MINUTE.floor(at))


class OwnLoadTests(FathomTestCase):
    def slot(self, source: Agent, destination: Agent, state: str = SlotState.PLANNED) -> Slot:
        """A throughput slot over seconds 20 to 29 of T0's minute."""
        start = T0 + LOADED.start * SECOND
        return Slot.objects.create(
            source=source, destination=destination, test_type=Kind.THROUGHPUT, state=state,
            period_start=start, start_at=start, end_at=T0 + LOADED.stop * SECOND,
        )  # fmt: skip

    def test_pings_in_a_planned_throughput_slot_are_left_out_of_the_rollup(self) -> None:
        self.slot(self.frankfurt, self.athens)  # either direction loads both hosts
        ingest(self.athens, ping_result(self.frankfurt, T0, RTTS, SECOND))
        assert flagged(self.athens, self.frankfurt) == list(LOADED)
        refresh(EXAMPLES_RECORDED_AT)
        row = minute_row(self.athens, self.frankfurt)
        # The band is the path's 20 ms; the ten pings in the test's queue are counted apart.
        assert (row.sent, row.lost, row.count, row.own_load) == (50, 0, 50, 10)
        assert row.max_ms == row.p90_ms == row.p50_ms == 20.0

    def test_a_test_with_a_third_agent_loads_the_shared_host(self) -> None:
        lisbon, _ = self.enroll("lisbon", "198.18.3.1")
        self.slot(self.athens, lisbon)
        ingest(self.athens, ping_result(self.frankfurt, T0, RTTS, SECOND))
        ingest(self.frankfurt, ping_result(self.athens, T0, RTTS, SECOND))
        assert flagged(self.athens, self.frankfurt) == flagged(self.frankfurt, self.athens) == list(LOADED)

    def test_an_unschedulable_slot_and_other_hosts_tests_flag_nothing(self) -> None:
        lisbon, _ = self.enroll("lisbon", "198.18.3.1")
        porto, _ = self.enroll("porto", "198.18.3.2")
        self.slot(self.athens, self.frankfurt, SlotState.UNSCHEDULABLE)  # never ran
        self.slot(lisbon, porto)  # neither host of the path
        ingest(self.athens, ping_result(self.frankfurt, T0, RTTS, SECOND))
        assert flagged(self.athens, self.frankfurt) == []
        refresh(EXAMPLES_RECORDED_AT)
        assert minute_row(self.athens, self.frankfurt).own_load == 0

    def test_a_run_stored_after_the_pings_flags_them_and_recomputes_their_minute(self) -> None:
        # A run no slot announced (the plan did not hold it): its pings were stored unflagged
        # and rolled up with the queue in them.
        ingest(self.athens, ping_result(self.frankfurt, T0, RTTS, SECOND))
        refresh(EXAMPLES_RECORDED_AT)
        assert minute_row(self.athens, self.frankfurt).max_ms == 60.0
        run = throughput_result(self.athens, T0 + LOADED.start * SECOND, 9e8)
        run["ended_at"] = (T0 + LOADED.stop * SECOND).isoformat()
        StaleBucket.objects.all().delete()
        ingest(self.frankfurt, run)
        assert flagged(self.athens, self.frankfurt) == list(LOADED)
        assert StaleBucket.objects.filter(resolution="minute", kind="rtt", bucket=T0).exists()
        refresh(EXAMPLES_RECORDED_AT)
        row = minute_row(self.athens, self.frankfurt)
        assert (row.sent, row.own_load, row.max_ms) == (50, 10, 20.0)

    def test_a_minute_all_under_load_keeps_its_row_with_nothing_counted(self) -> None:
        # Stored first unflagged, the minute's row must be rewritten, not left as it was.
        ingest(self.athens, ping_result(self.frankfurt, T0, [60.0] * 10, SECOND))
        refresh(EXAMPLES_RECORDED_AT)
        run = throughput_result(self.athens, T0 - SECOND, 9e8)
        run["ended_at"] = (T0 + 30 * SECOND).isoformat()
        ingest(self.frankfurt, run)
        refresh(EXAMPLES_RECORDED_AT)
        row = minute_row(self.athens, self.frankfurt)
        assert (row.sent, row.count, row.own_load, row.p50_ms) == (0, 0, 10, None)

    @override_settings(FATHOM_RAW_RETENTION_DAYS=30)
    def test_the_history_api_counts_them_apart_and_skips_a_minute_of_nothing_else(self) -> None:
        self.slot(self.frankfurt, self.athens)
        ingest(self.athens, ping_result(self.frankfurt, T0, RTTS, SECOND))
        loaded = T0 + timedelta(minutes=1)
        Slot.objects.create(
            source=self.athens, destination=self.frankfurt, test_type=Kind.THROUGHPUT,
            period_start=loaded, start_at=loaded, end_at=loaded + timedelta(minutes=1),
        )  # fmt: skip
        ingest(self.athens, ping_result(self.frankfurt, loaded, [60.0] * 30, 2 * SECOND))
        refresh(EXAMPLES_RECORDED_AT)
        self.client.force_login(self.owner)
        answer = self.client.get(
            "/api/v1/paths/history/",
            {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk), "from": T0.isoformat(),
             "to": (T0 + timedelta(minutes=5)).isoformat()},
        )  # fmt: skip
        assert answer.status_code == 200, answer.content
        points = answer.json()["rtt"]
        assert [(point["sent"], point["own_load"], point["p90"]) for point in points] == [(50, 10, 20.0)]
