"""The outbox: send one delivery, record the attempt, retry with backoff or disable the
channel. At least once: a worker killed between "sending" and "sent" leaves the row in
sending; the sweeper sends it again with the same key (webhook-id, Message-ID), on which
receivers dedupe. Never twice for one incident message and channel (a unique row)."""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from alerts.choices import DeliveryStatus
from alerts.models import Channel, Delivery, DeliveryAttempt
from alerts.transports import TRANSPORTS, TransportError
from core import metrics

log = logging.getLogger(__name__)

# Seconds before retry n (Standard Webhooks' example schedule, cut at a day), with jitter.
BACKOFF_S = [5, 30, 120, 600, 1800, 3600, 7200, 14400, 28800, 86400]


@dataclass(frozen=True)
class Outcome:
    """What deliver() did: sent, retry in retry_in_s, failed for good, not due yet, or
    nothing to do (sent already, or another worker is sending it)."""

    status: str
    retry_in_s: float | None = None


def stale_after() -> timedelta:
    """How long a delivery may stay "sending" before it counts as its worker's death."""
    return timedelta(seconds=settings.ALERT_STALE_SENDING_S)


def backoff_s(attempts: int) -> float:
    base = BACKOFF_S[min(attempts - 1, len(BACKOFF_S) - 1)]
    return base * random.uniform(0.9, 1.1)  # noqa: S311 - jitter, not a secret


def _claim(delivery_id: int, now: datetime) -> tuple[Delivery, Channel] | Outcome:
    """Locks the row, checks the channel's rate limit, and marks it sending."""
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_for_update(skip_locked=True)
            .filter(
                pk=delivery_id, status__in=[DeliveryStatus.PENDING, DeliveryStatus.RETRYING, DeliveryStatus.SENDING]
            )
            .first()
        )
        if delivery is None:
            return Outcome("nothing")
        if delivery.status != DeliveryStatus.SENDING and delivery.next_attempt_at > now:
            return Outcome("not_due")  # its retry is scheduled already
        if (
            delivery.status == DeliveryStatus.SENDING
            and delivery.sending_since
            and now - delivery.sending_since < stale_after()
        ):
            return Outcome("nothing")  # another worker is on it
        channel = Channel.objects.select_for_update().get(pk=delivery.channel_id)
        if not channel.enabled:
            delivery.status, delivery.last_error = DeliveryStatus.FAILED, f"channel disabled: {channel.disabled_reason}"
            delivery.save(update_fields=["status", "last_error"])
            return Outcome("failed")
        if channel.next_send_at and channel.next_send_at > now:
            wait = (channel.next_send_at - now).total_seconds()
            delivery.next_attempt_at = channel.next_send_at
            delivery.save(update_fields=["next_attempt_at"])
            return Outcome("rate_limited", wait)
        transport = TRANSPORTS[channel.kind]
        channel.next_send_at = now + timedelta(seconds=transport.min_interval_s) if transport.min_interval_s else None
        channel.save(update_fields=["next_send_at"])
        delivery.status, delivery.sending_since = DeliveryStatus.SENDING, now
        delivery.attempts += 1
        delivery.save(update_fields=["status", "sending_since", "attempts"])
        return delivery, channel


def deliver(delivery_id: int, now: datetime | None = None) -> Outcome:
    """Sends one delivery if it is due and nobody else is sending it."""
    claimed = _claim(delivery_id, now or timezone.now())
    if isinstance(claimed, Outcome):
        return claimed
    delivery, channel = claimed
    transport = TRANSPORTS[channel.kind](channel.config)
    started = time.monotonic()
    try:
        sent = transport.send(delivery.message, str(delivery.key))
    except TransportError as exc:
        return _failed(delivery, channel, exc, (time.monotonic() - started) * 1000)
    except Exception as exc:  # a transport bug must not leave the row in "sending" forever
        log.exception("transport %s crashed", channel.kind)
        return _failed(
            delivery, channel, TransportError(f"internal error: {exc!r}"), (time.monotonic() - started) * 1000
        )
    took = (time.monotonic() - started) * 1000
    done = timezone.now()
    with transaction.atomic():
        DeliveryAttempt.objects.create(
            delivery=delivery, ok=True, status_code=sent.status_code, response=sent.response[:500], duration_ms=took
        )
        Delivery.objects.filter(pk=delivery.pk).update(
            status=DeliveryStatus.SENT, sent_at=done, last_error="", sending_since=None
        )
        Channel.objects.filter(pk=channel.pk).update(last_success_at=done, last_error="")
    return _counted(channel, Outcome("sent"))


def _counted(channel: Channel, outcome: Outcome) -> Outcome:
    metrics.count(metrics.ALERT_DELIVERIES, channel_kind=channel.kind, outcome=outcome.status)
    return outcome


def _failed(delivery: Delivery, channel: Channel, exc: TransportError, took_ms: float) -> Outcome:
    return _counted(channel, _record_failure(delivery, channel, exc, took_ms))


def _record_failure(delivery: Delivery, channel: Channel, exc: TransportError, took_ms: float) -> Outcome:
    now = timezone.now()
    message = str(exc)
    with transaction.atomic():
        DeliveryAttempt.objects.create(
            delivery=delivery,
            ok=False,
            status_code=exc.status_code,
            response=exc.response,
            error=message[:2000],
            duration_ms=took_ms,
        )
        Channel.objects.filter(pk=channel.pk).update(last_error=message[:2000])
        if exc.permanent:
            Delivery.objects.filter(pk=delivery.pk).update(
                status=DeliveryStatus.FAILED, last_error=message, sending_since=None
            )
            if delivery.kind != "test" and not exc.message_only:
                Channel.objects.filter(pk=channel.pk).update(
                    enabled=False, disabled_reason=f"{now:%Y-%m-%d %H:%M} UTC: {message}"[:2000]
                )
            log.warning(
                "channel %s: %s: %s",
                channel.name,
                "the receiver refused this message" if exc.message_only else "permanent failure",
                message,
            )
            return Outcome("failed")
        if delivery.kind == "test" or delivery.attempts >= len(BACKOFF_S):
            Delivery.objects.filter(pk=delivery.pk).update(
                status=DeliveryStatus.FAILED, last_error=message, sending_since=None
            )
            return Outcome("failed")
        wait = max(exc.retry_after_s or 0.0, backoff_s(delivery.attempts))
        Delivery.objects.filter(pk=delivery.pk).update(
            status=DeliveryStatus.RETRYING,
            last_error=message,
            sending_since=None,
            next_attempt_at=now + timedelta(seconds=wait),
        )
        if exc.retry_after_s:
            # The receiver asked every sender to this channel to wait.
            Channel.objects.filter(pk=channel.pk).update(next_send_at=now + timedelta(seconds=exc.retry_after_s))
    return Outcome("retrying", wait)


def due(now: datetime, limit: int = 200) -> list[int]:
    """Deliveries to (re)send now: pending or retrying and due, or sending by a dead worker."""
    ready = Delivery.objects.filter(
        status__in=[DeliveryStatus.PENDING, DeliveryStatus.RETRYING], next_attempt_at__lte=now
    )
    stale = Delivery.objects.filter(status=DeliveryStatus.SENDING, sending_since__lt=now - stale_after())
    ids = list(ready.order_by("next_attempt_at").values_list("pk", flat=True)[:limit])
    ids += list(stale.values_list("pk", flat=True)[:limit])
    return ids
