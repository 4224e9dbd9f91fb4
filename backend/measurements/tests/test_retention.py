from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.test import TransactionTestCase

from measurements.models import PingSample
from measurements.retention import drop_expired_measurements


class RetentionTests(TransactionTestCase):
    def test_drops_only_chunks_older_than_the_retention(self) -> None:
        now = datetime(2026, 11, 22, tzinfo=UTC)
        agent = uuid.uuid4()
        for age_days in (400, 200, 10):
            PingSample.objects.create(
                time=now - timedelta(days=age_days),
                run_id=uuid.uuid4(),
                sample_index=0,
                source_id=agent,
                seq=1,
                rtt_ms=1.0,
            )
        dropped = drop_expired_measurements(now=now, retention_days=180)
        assert dropped["measurements_pingsample"] == 2
        assert PingSample.objects.count() == 1
        assert drop_expired_measurements(now=now, retention_days=180)["measurements_pingsample"] == 0

    def test_refuses_a_retention_below_one_day(self) -> None:
        with pytest.raises(ValueError, match="at least one day"):
            drop_expired_measurements(retention_days=0)
