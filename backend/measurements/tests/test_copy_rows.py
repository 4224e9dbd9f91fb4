"""COPY of sample rows: nothing to write opens no COPY (most batches hold one kind, and each
COPY costs round trips on every upload)."""

from __future__ import annotations

from unittest import mock

import psycopg

from fathom.testing import FathomTestCase
from measurements.copy_rows import copy_rows
from measurements.models import FlowSample


class CopyRowsTests(FathomTestCase):
    def test_no_rows_open_no_copy(self) -> None:
        with mock.patch.object(psycopg.Cursor, "copy", side_effect=AssertionError("a COPY was opened")):
            assert copy_rows(FlowSample, iter([])) == 0
        assert not FlowSample.objects.exists()
