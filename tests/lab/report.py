"""The lab check's results: every check records one row (configured, measured, its bound and
whether it held), printed as it is measured and again, at the end, as one table with a
summary line."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Row:
    scenario: str
    check: str
    configured: str
    measured: str
    bound: str
    ok: bool
    asserted: bool = True
    # Not judged: the least CPU steal any attempt of a failed measurement saw, when that
    # starved the emulator (see attempts.record_attempts).
    starved_steal_percent: float | None = None
    # Not judged: a paced run that failed while the emulator itself left packets late.
    emulator_late: str | None = None


ROWS: list[Row] = []


def add(row: Row) -> None:
    """Keeps a row for the table and prints it at once, so a long run shows its progress."""
    ROWS.append(row)
    status = "PASS" if row.ok else "FAIL"
    if not row.asserted:
        status = "STARVED" if row.starved_steal_percent is not None else "LATE" if row.emulator_late else "SHOW"
    print(f"  {status}  {row.check}: configured {row.configured}, measured {row.measured} ({row.bound})", flush=True)


def record(
    scenario: str,
    check: str,
    configured: str,
    measured: str,
    bound: str,
    ok: bool,
    asserted: bool = True,
    starved_steal_percent: float | None = None,
) -> None:
    add(Row(scenario, check, configured, measured, bound, ok, asserted, starved_steal_percent))


def not_judged(row: Row) -> bool:
    return row.starved_steal_percent is not None or row.emulator_late is not None


def verdict(row: Row) -> str:
    if row.starved_steal_percent is not None:
        return f"NOT JUDGED (steal >= {row.starved_steal_percent:.0f} % in every attempt)"
    if row.emulator_late is not None:
        return f"NOT JUDGED (the emulator was late: {row.emulator_late})"
    if not row.asserted:
        return "shown"
    return "yes" if row.ok else f"NO ({row.bound})"


def print_table(steal_limit_percent: float) -> int:
    """Prints every row, configured against measured, then how many passed, failed, were
    shown or not judged (at steal_limit_percent); returns how many asserted checks failed."""
    headers = ("scenario", "check", "configured", "measured")
    widths = [max(len(h), *(len(getattr(r, h)) for r in ROWS)) for h in headers]
    print()
    print("  ".join(f"{h:<{w}}" for h, w in zip(headers, widths, strict=True)) + "  ok")
    for r in ROWS:
        print(
            f"{r.scenario:<{widths[0]}}  {r.check:<{widths[1]}}  {r.configured:<{widths[2]}}  "
            f"{r.measured:<{widths[3]}}  {verdict(r)}"
        )
    failed = sum(r.asserted and not r.ok for r in ROWS)
    starved = sum(not_judged(r) for r in ROWS)
    shown = sum(not r.asserted for r in ROWS) - starved
    print(
        f"lab checks: {len(ROWS) - failed - shown - starved} passed, {failed} failed, {shown} shown without a bound,"
        f" {starved} not judged (the machine starved the emulator, steal >= {steal_limit_percent:g} %, or it"
        " left paced packets late)"
    )
    return failed
