"""Rolls up raw data stored before the history app ran: marks its buckets, then refreshes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from history.backfill import mark_range
from history.refresh import refresh


class Command(BaseCommand):
    help = "Compute the rollups of the raw data of the last N days (what raw retention still keeps)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=30, help="how far back (default 30)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["days"] < 1:
            raise CommandError("--days must be at least 1")
        now = timezone.now()
        marked = mark_range(now - timedelta(days=options["days"]), now, now)
        claimed = refresh(now)
        self.stdout.write(f"marked {marked}; recomputed {claimed}")
