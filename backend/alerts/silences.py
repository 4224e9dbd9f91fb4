"""When a silence or maintenance window is active, and what it covers."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from alerts import cron, matchers
from alerts.models import Silence


def is_active(silence: Silence, now: datetime) -> bool:
    """Inside [starts_at, ends_at), not expired by hand, and for a recurring window on one of
    its weekdays within its local daily window (end exclusive; an end before the start runs
    past midnight into the next day), or within duration_s of a firing of its cron schedule
    (local time)."""
    if silence.expired_at is not None and silence.expired_at <= now:
        return False
    if not silence.starts_at <= now < silence.ends_at:
        return False
    local = now.astimezone(ZoneInfo(silence.time_zone))
    if silence.cron and silence.duration_s:
        return cron.parse(silence.cron).started_within(local, timedelta(seconds=silence.duration_s))
    if not silence.weekdays or silence.window_start is None or silence.window_end is None:
        return True
    clock, start, end = local.time().replace(tzinfo=None), silence.window_start, silence.window_end
    if start < end:
        return local.isoweekday() in silence.weekdays and start <= clock < end
    # Overnight: the part after midnight belongs to the window that began the day before.
    yesterday = (local.isoweekday() + 5) % 7 + 1
    return (local.isoweekday() in silence.weekdays and clock >= start) or (
        yesterday in silence.weekdays and clock < end
    )


def state(silence: Silence, now: datetime) -> str:
    """pending, active or expired, as the UI shows it (a recurring window between its
    windows is "scheduled")."""
    if (silence.expired_at is not None and silence.expired_at <= now) or now >= silence.ends_at:
        return "expired"
    if now < silence.starts_at:
        return "pending"
    return "active" if is_active(silence, now) else "scheduled"


def silencing(active: list[Silence], labels: matchers.Labels) -> Silence | None:
    """The first active silence whose matchers all match, if any."""
    for silence in active:
        if matchers.matches(silence.matchers, labels):
            return silence
    return None
