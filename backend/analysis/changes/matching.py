"""Episodes into incidents, and incidents onto the findings already stored.

Pure. Several rules may see one change (the fast and the slow throughput rule); episodes of
one metric whose periods overlap are one incident. Recomputing the rules over a longer series
moves start estimates, so an incident is matched to a stored finding by overlapping periods,
not by an equal start: the finding is then updated rather than a second one added.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from analysis.changes.episodes import Direction, Episode


@dataclass
class MergedEpisode:
    """Episodes of one metric whose periods overlap: one incident, several rules."""

    first: Episode
    rules: list[str]
    cleared_at: datetime | None

    @property
    def started_at(self) -> datetime:
        return self.first.started_at


def merge_episodes(episodes: Iterable[Episode], worse: Direction | None = None) -> list[MergedEpisode]:
    """Overlapping episodes as incidents, at most the newest of them open.

    An open incident takes in what starts in it, and a cleared one the episodes of its own
    direction that started by its clear. A rise that starts where a drop cleared is not more
    of the drop: merged, it reopened a cleared regression, which paged for as long as the
    rise stood (CI, 2026-11-28). With `worse` (the metric's direction that is a regression),
    an episode in that direction ends an open incident of the other one where it starts and
    is its own: an open rise (a tuned host, or the slow rule's reading of a short dip) must
    not hide the next drop under its direction, which no drop rule pages for.
    """
    merged: list[MergedEpisode] = []
    for episode in sorted(episodes, key=lambda item: (item.started_at, item.detected_at)):
        last = merged[-1] if merged else None
        if last is None:
            merged.append(MergedEpisode(episode, [episode.rule], episode.cleared_at))
            continue
        same_way = episode.direction == last.first.direction or episode.started_at == last.started_at
        if last.cleared_at is None and not same_way and episode.direction == worse:
            last.cleared_at = episode.started_at
        elif last.cleared_at is None or (episode.started_at <= last.cleared_at and same_way):
            if episode.rule not in last.rules:
                last.rules.append(episode.rule)
            if last.cleared_at is not None:
                last.cleared_at = None if episode.cleared_at is None else max(last.cleared_at, episode.cleared_at)
            continue
        merged.append(MergedEpisode(episode, [episode.rule], episode.cleared_at))
    return merged


@dataclass(frozen=True)
class StoredPeriod:
    """A stored finding as matching sees it: its key and its period."""

    key: int
    started_at: datetime
    cleared_at: datetime | None


@dataclass(frozen=True)
class Match:
    """An incident and what it does to the stored findings."""

    episode: MergedEpisode
    key: int | None  # the stored finding it updates; None: a new one
    folded: tuple[int, ...]  # further stored findings it covers, to be folded into it (deleted)


def overlaps(stored: StoredPeriod, episode: MergedEpisode) -> bool:
    """Whether the two periods share time. A period ends before its `cleared_at` (the first
    recovered point), so one that starts there only touches it: a rise that starts where a
    drop cleared is not that drop (matched as one, a recompute folded the rise's finding into
    the drop's and added it again, CI 2026-12-02)."""
    return (episode.cleared_at is None or stored.started_at < episode.cleared_at) and (
        stored.cleared_at is None or episode.started_at < stored.cleared_at
    )


def overlap_s(stored: StoredPeriod, episode: MergedEpisode) -> float:
    far = datetime.max.replace(tzinfo=UTC)
    start = max(stored.started_at, episode.started_at)
    end = min(stored.cleared_at or far, episode.cleared_at or far)
    return (end - start).total_seconds() if end != far else float("inf")


def match_episodes(episodes: Sequence[MergedEpisode], stored: Sequence[StoredPeriod]) -> list[Match]:
    """Each incident, in order, with the stored finding it updates and those it folds in.

    A stored finding is matched at most once. Among the overlapping ones not matched yet the
    same start comes first, then the longest overlap: a start estimate that moved still finds
    its finding, and two findings never end up with one start.
    """
    matched: set[int] = set()
    matches: list[Match] = []
    for episode in episodes:
        candidates = [period for period in stored if period.key not in matched and overlaps(period, episode)]
        candidates.sort(key=lambda period: (period.started_at != episode.started_at, -overlap_s(period, episode)))
        keys = tuple(period.key for period in candidates)
        matched.update(keys)
        matches.append(Match(episode, keys[0] if keys else None, keys[1:]))
    return matches
