"""The recompute command: a time range analysed again, and its arguments checked."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

from django.core.management import CommandError, call_command

from analysis.models import RunAnalysis
from analysis.tests.services.fixtures import MIB, T0, facts, snapshot, throughput_run
from fathom.testing import FathomTestCase


class AnalyzeCommandTests(FathomTestCase):
    def test_recomputes_a_range(self) -> None:
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))
        throughput_run(self.athens, self.frankfurt, T0, 3.05e9)
        out = StringIO()
        call_command("analyze", "--since", "2026-11-20T11:00:00Z", "--until", "2026-11-20T13:00:00Z", stdout=out)
        assert "analysed 1 throughput runs" in out.getvalue()
        assert RunAnalysis.objects.count() == 1

    def test_bad_arguments(self) -> None:
        for args, message in [
            ((), "give --since or --hours"),
            (("--since", "yesterday"), "not an ISO 8601 time"),
            (("--since", "2026-11-20T11:00:00"), "time zone"),
            (("--hours", "-1"), "positive"),
            (("--since", "2026-11-20T11:00:00Z", "--hours", "1"), "not both"),
            (("--since", "2026-11-20T13:00:00Z", "--until", "2026-11-20T11:00:00Z"), "empty"),
        ]:
            with self.assertRaisesMessage(CommandError, message):
                call_command("analyze", *args, stdout=StringIO())
