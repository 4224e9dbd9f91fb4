"""An alert's advice is about what changed: a one-way finding names its direction and never
gets the path's buffer advice, which is about throughput."""

from __future__ import annotations

from unittest import mock

from alerts.choices import RuleKind
from alerts.models import Rule
from alerts.services.advice import advice_for
from alerts.services.conditions import Condition


def condition(metric: str) -> Condition:
    rule = Rule(name=f"{metric} rule", kind=RuleKind.FINDING, metric=metric)
    return Condition(rule, {"metric": metric}, f"{metric} on a -> b", ("a", "b"))


def test_one_way_findings_get_advice_about_their_direction_not_buffers() -> None:
    with mock.patch("alerts.services.advice.path_report") as report:
        delay, loss = advice_for(condition("one_way_delay")), advice_for(condition("one_way_loss"))
    report.assert_not_called()
    assert "direction" in delay and "queue" in delay
    assert "direction" in loss and "policer" in loss
    assert "tcp_rmem" not in delay + loss
