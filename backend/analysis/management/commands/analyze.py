"""Recomputes the analysis of a time range: every OK throughput run and flow sweep in it is
analysed again (overwriting its row) and the regression rules re-run on the paths they
belong to. For after an upgrade of the analysis, or to fill in history.

    python manage.py analyze --since 2026-11-01T00:00:00Z --until 2026-11-23T00:00:00Z
    python manage.py analyze --hours 6       # the last six hours
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from analysis.services.run_analyses import analyze_range
from analysis.services.snapshots import refresh_snapshots


def _moment(text: str, option: str) -> datetime:
    moment = parse_datetime(text)
    if moment is None:
        raise CommandError(f"{option}: not an ISO 8601 time: {text!r}")
    if timezone.is_naive(moment):
        raise CommandError(f"{option}: give a time zone (e.g. {text}Z)")
    return moment


class Command(BaseCommand):
    help = "Recompute ceilings, diagnoses, RTT modes and findings for runs in a time range."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", help="start of the range (ISO 8601 with a time zone)")
        parser.add_argument("--until", help="end of the range (default: now)")
        parser.add_argument("--hours", type=float, help="the range is the last HOURS hours")

    def handle(self, *args: Any, **options: Any) -> None:
        now = timezone.now()
        until = _moment(options["until"], "--until") if options["until"] else now
        if options["hours"] is not None:
            if options["since"]:
                raise CommandError("give --since or --hours, not both")
            if options["hours"] <= 0:
                raise CommandError("--hours must be positive")
            since = until - timedelta(hours=options["hours"])
        elif options["since"]:
            since = _moment(options["since"], "--since")
        else:
            raise CommandError("give --since or --hours")
        if since >= until:
            raise CommandError("the range is empty: --since must be before --until")
        # Settled: runs that ended in the last two minutes are left to the task, whose inputs
        # (the other agent's pings and sweeps) may still be on their way.
        progress = analyze_range(since, until, only_missing=False, now=now, settled=True)
        # The grids show what was just recomputed, not the minute's snapshot from before it.
        refresh_snapshots()
        self.stdout.write(
            f"analysed {progress.throughput_runs} throughput runs and {progress.sweeps} flow sweeps; "
            f"{progress.paths} paths checked, {progress.findings_opened} findings opened"
        )
