"""Expiring overdue slots while an agent's upload is settling some of them, and forgetting
slots long past.

Both update slot rows. The expiry used to wait for rows an upload held while the upload
waited for rows the expiry held (PostgreSQL found the deadlock in the demo, after its agents
came back with many late results). It now skips rows another transaction holds.
"""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import psycopg
import pytest
from django.db import connection
from django.test import TransactionTestCase, override_settings
from django.utils import timezone

from inventory.models import Agent
from meshes.models import Slot
from meshes.services import housekeeping
from meshes.services.housekeeping import forget_past_slots
from meshes.services.outcomes import expire_overdue_slots, record_slot_outcomes
from meshes.tests.test_slot_service import throughput_slot


def agent(name: str, address: str) -> Agent:
    return Agent.objects.create(name=name, address=address, credential_sha256="0" * 64)


class SlotExpiryTests(TransactionTestCase):
    def test_expiry_skips_a_slot_an_upload_holds_and_expires_it_on_the_next_pass(self) -> None:
        athens, frankfurt = agent("athens", "198.18.1.1"), agent("frankfurt", "198.18.2.1")
        now = timezone.now()
        held, free = (throughput_slot(athens, frankfurt, now - timedelta(hours=hours)) for hours in (2, 3))
        # Another session (an upload's transaction) holds one overdue slot's row.
        with psycopg.connect(**connection.get_connection_params()) as upload:
            upload.execute("SELECT 1 FROM meshes_slot WHERE id = %s FOR UPDATE", [held.pk])
            with connection.cursor() as cursor:
                # Waiting for the held row would fail here instead of hanging the test.
                cursor.execute("SET lock_timeout = '2s'")
            assert expire_overdue_slots(now) == 1
            upload.rollback()
        held.refresh_from_db()
        free.refresh_from_db()
        assert (held.state, free.state) == ("planned", "missed")
        assert expire_overdue_slots(now) == 1
        held.refresh_from_db()
        assert held.state == "missed" and "no result from the agent" in held.reason

    def test_a_late_result_still_settles_a_slot_expiry_marked_missed(self) -> None:
        athens, frankfurt = agent("athens", "198.18.1.1"), agent("frankfurt", "198.18.2.1")
        now = timezone.now()
        slot = throughput_slot(athens, frankfurt, now - timedelta(hours=2))
        assert expire_overdue_slots(now) == 1
        late = {"slot_id": str(slot.pk), "peer_id": frankfurt.pk, "target": "198.18.2.1", "test_type": "throughput",
                "status": "failed",
                "id": None, "error": "iperf3 error: the server is busy"}  # fmt: skip
        record_slot_outcomes(athens, [late])
        slot.refresh_from_db()
        assert slot.state == "failed" and slot.reason == "iperf3 error: the server is busy"


class PastSlotTests(TransactionTestCase):
    def test_slots_that_ended_before_the_raw_retention_are_forgotten_in_batches(self) -> None:
        athens, frankfurt = agent("athens", "198.18.1.1"), agent("frankfurt", "198.18.2.1")
        now = timezone.now()
        old = [throughput_slot(athens, frankfurt, now - timedelta(days=31, minutes=minutes)) for minutes in range(5)]
        # Ends 30 s after it starts: inside 30 days by 29 minutes 30 s.
        kept = [throughput_slot(athens, frankfurt, now - timedelta(days=30) + timedelta(minutes=29))]
        kept.append(throughput_slot(athens, frankfurt, now + timedelta(hours=1)))
        assert expire_overdue_slots(now) == 6  # what became of them does not matter
        with override_settings(RAW_RETENTION_DAYS=30), mock.patch.object(housekeeping, "SLOT_FORGET_BATCH", 2):
            assert forget_past_slots(now) == len(old)
        assert set(Slot.objects.values_list("pk", flat=True)) == {slot.pk for slot in kept}
        assert forget_past_slots(now, keep_days=1) == 1
        with pytest.raises(ValueError, match="at least one day"):
            forget_past_slots(now, keep_days=0)
