"""Every periodic task, in one place, with crontab schedules and expiry.

Crontab rather than intervals because a beat restart resets interval countdowns; `expires`
so a backlog after an outage does not run the same housekeeping many times over.
"""

from celery import Celery
from celery.canvas import Signature
from celery.schedules import crontab

HOUR_S = 3600


def register(app: Celery) -> None:
    from django.conf import settings

    from alerts.tasks import evaluate_alerts, redeliver_due
    from analysis.tasks import analyze_recent, purge_expired_analysis, refresh_snapshots
    from history.tasks import drop_expired_rollups, refresh_rollups
    from inventory.tasks import purge_stale_enrollment_tokens
    from measurements.tasks import drop_expired_measurements
    from meshes.tasks import expire_overdue_slots, forget_old_issued_plans, forget_past_slots, plan_exclusive_slots
    from perfsonar.tasks import check_perfsonar_nodes, forget_finished_perfsonar_tasks, sync_perfsonar

    def nightly(minute: int, task: Signature, name: str) -> None:
        """Housekeeping at 03:mm, staggered: each pass at its own minute."""
        app.add_periodic_task(crontab(minute=str(minute), hour="3"), task, name=name, expires=6 * HOUR_S)

    nightly(17, drop_expired_measurements.s(), "drop measurements older than the retention period")
    nightly(19, drop_expired_rollups.s(), "drop rollups older than each resolution's retention")
    nightly(23, purge_expired_analysis.s(), "drop analyses and cleared findings older than the retention period")
    nightly(29, forget_old_issued_plans.s(), "forget plan versions no agent has been served for the spool's lifetime")
    nightly(
        37,
        forget_finished_perfsonar_tasks.s(),
        "forget perfSONAR tasks deleted or refused longer ago than the raw retention",
    )
    nightly(39, forget_past_slots.s(), "forget exclusive slots that ended longer ago than the raw retention")

    app.add_periodic_task(
        crontab(minute="*"),
        refresh_rollups.s(),
        name="recompute the settled rollup buckets new or late results touched",
        expires=60,
    )
    app.add_periodic_task(
        crontab(minute="*"),
        refresh_snapshots.s(),
        name="recompute every enabled mesh's grid for the minute to come",
        expires=60,
    )
    app.add_periodic_task(
        crontab(minute="41"),
        purge_stale_enrollment_tokens.s(),
        name="delete enrolment tokens long past use",
        expires=HOUR_S,
    )
    app.add_periodic_task(
        crontab(minute="*/5"),
        plan_exclusive_slots.s(),
        name="extend the plan of exclusive (throughput) slots to the horizon",
        expires=300,
    )
    app.add_periodic_task(
        crontab(minute="*"),
        expire_overdue_slots.s(),
        name="record planned slots without a result as missed",
        expires=60,
    )
    # On intervals, settable: a test stack syncs every few seconds rather than every minute.
    app.add_periodic_task(
        float(settings.PERFSONAR_SYNC_EVERY_S),
        sync_perfsonar.s(),
        name="create, renew and delete pScheduler tasks on perfSONAR nodes; poll runs never pushed",
        expires=float(settings.PERFSONAR_SYNC_EVERY_S),
    )
    app.add_periodic_task(
        float(settings.PERFSONAR_CHECK_EVERY_S),
        check_perfsonar_nodes.s(),
        name="check perfSONAR nodes: reachable, tests and tools, clock offset",
        expires=float(settings.PERFSONAR_CHECK_EVERY_S),
    )
    # On an interval, settable: a beat restart delaying one run by up to an interval is
    # harmless, and a test stack analyses every few seconds rather than every minute.
    app.add_periodic_task(
        float(settings.ANALYSIS_EVERY_S),
        analyze_recent.s(),
        name="analyse new throughput runs and flow sweeps; re-run the regression rules",
        expires=float(settings.ANALYSIS_EVERY_S),
    )
    # Alerting ticks more often than once a minute (group_wait is 30 s), so on an interval: a
    # beat restart delaying one tick by a few seconds is harmless.
    app.add_periodic_task(
        float(settings.ALERT_EVALUATE_EVERY_S),
        evaluate_alerts.s(),
        name="evaluate alert rules, group incidents, queue notifications",
        expires=float(settings.ALERT_EVALUATE_EVERY_S),
    )
    app.add_periodic_task(
        30.0,
        redeliver_due.s(),
        name="send due retries and deliveries a dead worker left",
        expires=30.0,
    )
