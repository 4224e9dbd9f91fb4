"""Five-field cron expressions (minute hour day-of-month month day-of-week) for recurring
maintenance windows: `*`, numbers, ranges `a-b`, lists `a,b` and steps `*/n` or `a-b/n`;
day of week 0-7 with 0 and 7 Sunday. As in cron, when both day fields are restricted a day
matches either."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))


class CronError(ValueError):
    """An expression that is not five valid fields, with a message naming the bad one."""


def _field(text: str, name: str, low: int, high: int) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if body == "*":
                start, end = low, high
            elif "-" in body:
                start, end = (int(x) for x in body.split("-", 1))
            else:
                start = end = int(body)
        except ValueError as exc:
            raise CronError(f"{name}: {part!r} is not a number, range or step") from exc
        if step < 1 or not low <= start <= end <= high:
            raise CronError(f"{name}: {part!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step))
    return frozenset(values)


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool
    any_weekday: bool

    def matches(self, moment: datetime) -> bool:
        if moment.minute not in self.minutes or moment.hour not in self.hours or moment.month not in self.months:
            return False
        day_ok, weekday_ok = moment.day in self.days, moment.isoweekday() % 7 in self.weekdays
        if self.any_day or self.any_weekday:
            return day_ok and weekday_ok
        return day_ok or weekday_ok

    def started_within(self, moment: datetime, duration: timedelta) -> bool:
        """Whether the schedule fired in (moment - duration, moment]: a window of that length
        starting at each firing is open at `moment` (local time, minute resolution)."""
        minute = moment.replace(second=0, microsecond=0)
        for back in range(int(duration.total_seconds() // 60) + 1):
            start = minute - timedelta(minutes=back)
            if self.matches(start) and moment < start + duration:
                return True
        return False


def parse(expression: str) -> Cron:
    parts = expression.split()
    if len(parts) != 5:
        raise CronError(f"a cron expression has 5 fields (minute hour day month weekday), not {len(parts)}")
    minutes, hours, days, months, weekdays = (
        _field(part, name, low, high) for part, (name, low, high) in zip(parts, FIELDS, strict=True)
    )
    weekdays = frozenset(day % 7 for day in weekdays)
    return Cron(minutes, hours, days, months, weekdays, parts[2] == "*", parts[4] == "*")
