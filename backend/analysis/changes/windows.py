"""RTT and loss per aligned time window: what the RTT CUSUM and the loss rule read.

Pure. The service builds the same windows in SQL (time_bucket) for stored pings; this module
builds them from samples, for tests and the benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from analysis.changes.episodes import require_positive
from core.units import loss_fraction


@dataclass(frozen=True)
class RttWindow:
    """Probe results of one aligned window; the RTT statistics are None when every probe was lost."""

    start: datetime
    end: datetime
    sent: int
    lost: int
    min_ms: float | None
    p50_ms: float | None
    p90_ms: float | None

    @property
    def loss_fraction(self) -> float | None:
        return loss_fraction(self.lost, self.sent)


def rtt_windows(samples: Sequence[tuple[datetime, float | None]], *, window_s: int = 300) -> list[RttWindow]:
    """Probe samples (time, rtt in ms; None = lost) grouped into windows aligned to epoch multiples.

    Windows without samples are left out. A NaN, infinite or negative RTT is a broken sample,
    not a lost one, and is skipped. The percentiles are numpy's linear interpolation.
    """
    require_positive("window_s", window_s)
    grouped: dict[int, tuple[datetime, list[float], int]] = {}
    for moment, rtt_ms in samples:
        if rtt_ms is not None and not (math.isfinite(rtt_ms) and rtt_ms >= 0):
            continue
        slot = math.floor(moment.timestamp() / window_s)
        _, received, lost = grouped.get(slot, (moment, [], 0))
        if rtt_ms is None:
            lost += 1
        else:
            received.append(rtt_ms)
        grouped[slot] = (moment, received, lost)
    windows: list[RttWindow] = []
    for slot in sorted(grouped):
        moment, received, lost = grouped[slot]
        start = datetime.fromtimestamp(slot * window_s, tz=moment.tzinfo)
        end = datetime.fromtimestamp((slot + 1) * window_s, tz=moment.tzinfo)
        if received:
            values = np.asarray(received, dtype=np.float64)
            p50, p90 = (float(v) for v in np.percentile(values, [50, 90]))
            windows.append(RttWindow(start, end, len(received) + lost, lost, float(values.min()), p50, p90))
        else:
            windows.append(RttWindow(start, end, lost, lost, None, None, None))
    return windows
