"""Synthetic series shared by the tests of the regression rules, and the check every
episode's evidence passes: plain JSON, and a FindingEvidence of contract/analysis.v1.schema.json."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np

from analysis.changes.episodes import Episode, Point
from analysis.payloads import checked

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TEST_INTERVAL = timedelta(hours=6)
RATE_BPS = 940e6


def at(index: int) -> datetime:
    return T0 + index * TEST_INTERVAL


def rates(values: np.ndarray | list[float]) -> list[Point]:
    return [Point(at(i), float(value)) for i, value in enumerate(values)]


def noisy_rates(seed: int, n: int, sigma: float = 0.05, steps: dict[int, float] | None = None) -> np.ndarray:
    """RATE_BPS with lognormal noise; steps maps an index to the factor from there on."""
    rng = np.random.default_rng(seed)
    values = RATE_BPS * np.exp(rng.normal(0.0, sigma, n))
    for index, factor in (steps or {}).items():
        values[index:] *= factor
    return values


def assert_json(episodes: list[Episode]) -> None:
    for episode in episodes:
        json.dumps(episode.evidence, allow_nan=False)
        checked("FindingEvidence", episode.evidence)
