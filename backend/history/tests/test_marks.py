"""Which buckets a batch's results mark stale (pure)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from history.marks import Mark, result_marks
from history.models import Kind

SOURCE = uuid.uuid4()
PEER = uuid.uuid4()
START = datetime(2026, 11, 22, 10, 0, 50, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def ping(samples: list[datetime], peer: uuid.UUID | None = PEER) -> dict[str, object]:
    return {"test_type": "ping", "peer_id": str(peer) if peer else None, "target": "198.18.0.2",
            "started_at": stamp(START),
            "ping": {"samples": [{"time": stamp(moment)} for moment in samples]}}  # fmt: skip


def test_ping_samples_mark_each_minute_they_fall_in() -> None:
    marks = result_marks(SOURCE, [ping([START, START + timedelta(seconds=5), START + timedelta(seconds=20)])])
    assert marks == {
        Mark(Kind.RTT, SOURCE, PEER, 4, datetime(2026, 11, 22, 10, 0, tzinfo=UTC)),
        Mark(Kind.RTT, SOURCE, PEER, 4, datetime(2026, 11, 22, 10, 1, tzinfo=UTC)),
    }


def test_a_reverse_throughput_run_marks_the_path_its_data_flowed_on() -> None:
    forward = {"test_type": "throughput", "peer_id": str(PEER), "target": "198.18.0.2", "started_at": stamp(START),
               "throughput": {"reverse": False, "options": {"reverse": False}}}  # fmt: skip
    reverse = {**forward, "throughput": {"reverse": True, "options": {"reverse": True}}}
    failed = {"test_type": "throughput", "peer_id": str(PEER), "target": "198.18.0.2", "started_at": stamp(START)}
    minute = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
    assert result_marks(SOURCE, [forward, failed]) == {Mark(Kind.THROUGHPUT, SOURCE, PEER, 4, minute)}
    assert result_marks(SOURCE, [reverse]) == {Mark(Kind.THROUGHPUT, PEER, SOURCE, 4, minute)}


def test_external_targets_and_other_kinds_mark_nothing() -> None:
    trace = {"test_type": "trace", "peer_id": str(PEER), "target": "198.18.0.2", "started_at": stamp(START)}
    assert result_marks(SOURCE, [ping([START], peer=None), trace]) == set()


def test_an_ipv6_result_marks_the_ipv6_path() -> None:
    six = {**ping([START]), "target": "2001:2::2"}
    assert result_marks(SOURCE, [six]) == {Mark(Kind.RTT, SOURCE, PEER, 6, datetime(2026, 11, 22, 10, 0, tzinfo=UTC))}


def test_minutes_of_samples_with_an_offset_are_the_same_instants() -> None:
    samples = [{"time": "2026-11-22T12:00:59.999+02:00"}, {"time": "2026-11-22T10:01:00Z"}]
    result = {"test_type": "ping", "peer_id": str(PEER), "target": "198.18.0.2",
              "started_at": "2026-11-22T12:00:50+02:00", "ping": {"samples": samples}}  # fmt: skip
    assert result_marks(SOURCE, [result]) == {
        Mark(Kind.RTT, SOURCE, PEER, 4, datetime(2026, 11, 22, 10, 0, tzinfo=UTC)),
        Mark(Kind.RTT, SOURCE, PEER, 4, datetime(2026, 11, 22, 10, 1, tzinfo=UTC)),
    }
