"""The emulator's lateness over time, link by link, so a test can ask how late it was while
given runs took place: a throughput finding made of runs the emulator delivered late measures
this machine's CPU, not the path, and is shown with that figure rather than judged."""

from __future__ import annotations

import bisect
import threading
from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from types import TracebackType

from .attempts import EMULATOR_LATE_SHARE
from .lab import Lab, Lateness, sum_lateness

SAMPLE_EVERY_S = 1.0


class LatenessLog:
    """Samples the lab's lateness of every link every SAMPLE_EVERY_S in a thread, while used as
    a context."""

    def __init__(self, lab: Lab) -> None:
        self._lab = lab
        self._times: list[datetime] = []
        self._samples: list[dict[str, Lateness]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lateness-log", daemon=True)

    def __enter__(self) -> LatenessLog:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            try:
                self._sample()
            except Exception:  # noqa: BLE001 - the lab going down ends the log, not the test
                return

    def _sample(self) -> None:
        sample = self._lab.lateness_by_link()
        with self._lock:
            self._times.append(datetime.now(UTC))
            self._samples.append(sample)

    def during(self, start: datetime, end: datetime, links: Collection[str] | None = None) -> Lateness | None:
        """Departures on `links` (every link by default) from the last sample before start to
        the first after end (a second wider at most each side); None when the log does not
        cover the span."""
        self._sample()
        with self._lock:
            before = bisect.bisect_right(self._times, start) - 1
            after = bisect.bisect_left(self._times, end)
            if before < 0 or after >= len(self._times):
                return None
            first, last = self._samples[before], self._samples[after]
        return sum_lateness(
            late - first[link] if link in first else late
            for link, late in last.items()
            if links is None or link in links
        )

    def late_during(self, start: datetime, seconds: float, links: Collection[str] | None = None) -> Lateness | None:
        """The span's lateness on `links` (every link by default) if the emulator left packets
        late in it (at the share that makes a paced run the emulator's fault,
        tests/lab/attempts.py), else None."""
        late = self.during(start, start + timedelta(seconds=seconds), links)
        return late if late is not None and late.share_later_than(1000) >= EMULATOR_LATE_SHARE else None
