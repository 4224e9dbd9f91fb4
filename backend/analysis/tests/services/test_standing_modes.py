"""The standing RTT modes the analysis task keeps per path for the grid: kept when a sweep or an
overlapping throughput run is analysed, recomputed when the day-long window moves past a sweep
that counted, and read by the grid instead of every path's day of sweeps."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

from django.db import connection
from django.test.utils import CaptureQueriesContext

from analysis.choices import RttModeVerdict
from analysis.models import StandingModes
from analysis.modes import CurrentModes, ModeVerdict, SweepSummary
from analysis.services.grid import mesh_grid
from analysis.services.run_analyses import analyze_recent
from analysis.services.sweep_modes import MODES_LOOKBACK, standing_valid_until
from analysis.tests.services.fixtures import MIB, T0, facts, flow_sweep, snapshot, throughput_run
from fathom.testing import FathomTestCase
from meshes.models import Mesh, MeshMember


def summary(minutes: int, verdict: ModeVerdict, *rtts: float, disturbed: bool = False) -> SweepSummary:
    modes = tuple((rtt, 1 / len(rtts)) for rtt in rtts)
    return SweepSummary(f"sweep-{minutes}", T0 + timedelta(minutes=minutes), verdict, modes, 16, disturbed)


class StandingValidityTests(FathomTestCase):
    def test_the_newest_sweep_stands_until_it_leaves_the_window(self) -> None:
        sweeps = [summary(0, ModeVerdict.SINGLE, 8.0), summary(15, ModeVerdict.SINGLE, 8.0)]
        chosen = CurrentModes(sweeps[1], sweeps[1], 0, None, "newest sweep")
        assert standing_valid_until(sweeps, chosen) == T0 + timedelta(minutes=15) + MODES_LOOKBACK

    def test_held_ecmp_modes_count_until_the_oldest_sweep_leaves_the_window(self) -> None:
        sweeps = [summary(0, ModeVerdict.ECMP, 8.0, 12.0), summary(15, ModeVerdict.SINGLE, 8.0)]
        chosen = CurrentModes(sweeps[0], sweeps[1], 1, 0.06, "held")
        assert standing_valid_until(sweeps, chosen) == T0 + MODES_LOOKBACK

    def test_no_decided_sweep_waits_for_new_data(self) -> None:
        assert standing_valid_until([], CurrentModes(None, None, 0, None, "no decided flow sweep")) is None


class StandingModesTests(FathomTestCase):
    def setUp(self) -> None:
        self.mesh = Mesh.objects.create(name="pair", kind="mesh")
        MeshMember.objects.create(mesh=self.mesh, agent=self.athens)
        MeshMember.objects.create(mesh=self.mesh, agent=self.frankfurt)
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))
        # ECMP, then one mode at an RTT that is none of its modes: a route change, one mode stands.
        self.ecmp = flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=30), 7.8, 11.9)
        self.stray = flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=15), 15.0, 15.0)
        analyze_recent(now=T0 + timedelta(minutes=5))

    def row(self) -> StandingModes:
        return StandingModes.objects.get(source=self.athens, destination=self.frankfurt)

    def cell_modes(self, minutes: int = 10) -> tuple[int | None, str | None]:
        with mock.patch("django.utils.timezone.now", return_value=T0 + timedelta(minutes=minutes)):
            grid = mesh_grid(self.mesh)
        (cell,) = [cell for cell in grid.cells if cell.source.pk == self.athens.pk]
        return cell.mode_count, cell.rtt_mode_verdict

    def test_a_swept_path_keeps_its_standing_modes_and_the_grid_reads_them(self) -> None:
        row = self.row()
        assert row.sweep_run_id == self.stray.id and row.mode_count == 1 and row.verdict == RttModeVerdict.SINGLE
        # An ECMP sweep before the newest took part in the rule: recomputed when it leaves the window.
        assert row.valid_until == self.ecmp.started_at + MODES_LOOKBACK
        # The reverse path has no sweep: no row, computed (as nothing) at read time.
        with CaptureQueriesContext(connection) as queries:
            assert self.cell_modes() == (1, RttModeVerdict.SINGLE)
        swept = [query["sql"] for query in queries.captured_queries if "analysis_sweepmodes" in query["sql"]]
        assert len(swept) == 1 and "unnest" in swept[0]  # the listed paths without a row only
        StandingModes.objects.filter(pk=row.pk).update(mode_count=7)
        assert self.cell_modes() == (7, RttModeVerdict.SINGLE)  # the kept row, not a recompute

    def test_a_throughput_run_over_a_sweep_changes_what_stands(self) -> None:
        throughput_run(self.athens, self.frankfurt, self.stray.started_at - timedelta(seconds=5), 3.0e9)
        analyze_recent(now=T0 + timedelta(minutes=6))
        row = self.row()
        assert row.sweep_run_id == self.ecmp.id and row.mode_count == 2 and row.verdict == RttModeVerdict.ECMP
        assert self.cell_modes() == (2, RttModeVerdict.ECMP)

    def test_an_expired_row_is_computed_at_read_time_and_refreshed_by_the_task(self) -> None:
        StandingModes.objects.filter(pk=self.row().pk).update(mode_count=7, valid_until=T0)
        assert self.cell_modes() == (1, RttModeVerdict.SINGLE)
        analyze_recent(now=T0 + timedelta(minutes=7))
        assert self.row().mode_count == 1
        # A day after the last sweep, nothing stands, and the row says so until new data.
        later = self.stray.started_at + MODES_LOOKBACK + timedelta(minutes=1)
        analyze_recent(now=later)
        row = self.row()
        assert row.sweep_run_id is None and row.mode_count is None and row.valid_until is None
        assert self.cell_modes(minutes=int((later - T0).total_seconds() // 60)) == (None, None)
