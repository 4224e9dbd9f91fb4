"""A path's label: the consensus of its recent runs' diagnoses (analysis/diagnosis.py labels
each run), which the path page, the grid and the findings read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analysis.choices import Diagnosis


@dataclass(frozen=True)
class PathLabel:
    """The path's label: the most common diagnosis of its recent runs, with its share."""

    diagnosis: Diagnosis
    agreeing_runs: int
    runs: int

    @property
    def share(self) -> float:
        return self.agreeing_runs / self.runs

    @property
    def summary(self) -> str:
        return f"{self.diagnosis.value.replace('_', ' ')} ({self.agreeing_runs} of {self.runs} runs)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "diagnosis": self.diagnosis.value,
            "agreeing_runs": self.agreeing_runs,
            "runs": self.runs,
            "share": self.share,
            "summary": self.summary,
        }


def path_label(labels: Sequence[Diagnosis]) -> PathLabel | None:
    """The consensus of a path's recent runs (newest first): the most common label, a tie
    going to the label of the newest run among the tied. "Unknown" (missing inputs, not a
    finding about the path) wins only when no run has another label."""
    if not labels:
        return None
    counts: Counter[Diagnosis] = Counter(label for label in labels if label is not Diagnosis.UNKNOWN)
    if not counts:
        return PathLabel(Diagnosis.UNKNOWN, len(labels), len(labels))
    most = max(counts.values())
    winner = next(label for label in labels if counts[label] == most)
    return PathLabel(winner, most, len(labels))
