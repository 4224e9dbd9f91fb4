"""The path and range a history query asks for, checked once for every view that answers over a path's history
(the history and the analysis timeline), so both refuse the same ranges with the same reasons."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, NamedTuple

from rest_framework.exceptions import ValidationError

from history.api.serializers import HistoryQuerySerializer
from inventory.api.lookups import path_agents
from inventory.models import Agent

DEFAULT_SPAN = timedelta(hours=24)


class PathRange(NamedTuple):
    source: Agent
    destination: Agent
    start: datetime
    end: datetime
    family: int


def path_range(query_params: dict[str, Any], now: datetime) -> PathRange:
    """The agents and range a history query (HistoryQuerySerializer) names: `to` defaults to now and
    is clipped to it, `from` to a day before `to`. A reversed, empty or future range is a 400 naming why."""
    query = HistoryQuerySerializer(data=query_params)
    query.is_valid(raise_exception=True)
    params = query.validated_data
    if params["source"] == params["destination"]:
        raise ValidationError({"destination": ["a path needs two different agents"]})
    source, destination = path_agents(params)
    end = params.get("to") or now
    start = params.get("from") or end - DEFAULT_SPAN
    if start > end:
        raise ValidationError({"from": ["from is after to: the range is reversed"]})
    if start == end:
        raise ValidationError({"from": ["the range is empty: from equals to"]})
    if start >= now:
        raise ValidationError({"from": ["the range lies in the future: there is no data yet"]})
    return PathRange(source, destination, start, min(end, now), params["family"])
