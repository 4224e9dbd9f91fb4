"""The choice sets the UI renders, with their labels and colours."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from django.db.models import TextChoices

from analysis.choices import (
    DIAGNOSIS_COLORS,
    FINDING_STATE_COLORS,
    RTT_MODE_VERDICT_COLORS,
    Diagnosis,
    FindingState,
    RttModeVerdict,
)
from inventory.choices import AGENT_STATUS_COLORS, TOKEN_STATE_COLORS, AgentStatus, TokenState
from measurements.choices import RUN_STATUS_COLORS, RunStatus
from meshes.choices import SLOT_STATE_COLORS, SlotState

Choice = TypeVar("Choice", bound=TextChoices)


def choice_list(choices: type[Choice], colors: Mapping[Choice, str]) -> list[dict[str, str]]:
    return [{"value": member.value, "label": member.label, "color": colors[member]} for member in choices]


def all_choices() -> dict[str, list[dict[str, str]]]:
    return {
        "agent_status": choice_list(AgentStatus, AGENT_STATUS_COLORS),
        "token_state": choice_list(TokenState, TOKEN_STATE_COLORS),
        "run_status": choice_list(RunStatus, RUN_STATUS_COLORS),
        "slot_state": choice_list(SlotState, SLOT_STATE_COLORS),
        "diagnosis": choice_list(Diagnosis, DIAGNOSIS_COLORS),
        "rtt_mode_verdict": choice_list(RttModeVerdict, RTT_MODE_VERDICT_COLORS),
        "finding_state": choice_list(FindingState, FINDING_STATE_COLORS),
    }
