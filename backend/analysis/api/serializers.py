"""Query and response shapes of the analysis API (the OpenAPI schema the UI's types come from).

The JSON payloads inside the responses (ceilings, evidence, inputs, time modes) are defined
once, in contract/analysis.v1.schema.json: their fields point at its $defs, which the OpenAPI
schema carries as components of the same names (SPECTACULAR_SETTINGS["APPEND_COMPONENTS"]).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from analysis.choices import ChangeRelation, FindingKind, FindingMetric, FindingState
from analysis.payloads import SCHEMA
from analysis.services.path_spark import SPARK_PAIRS, parse_pair
from core import contract
from core.serializers import StrictSerializer
from inventory.api.serializers import AgentRefSerializer, family_field, family_filter_field, family_query_field


def contract_field(definition: str) -> type[serializers.JSONField]:
    """A JSON field whose OpenAPI schema is $defs/<definition> of the analysis contract."""
    if definition not in contract.load(SCHEMA)["$defs"]:
        raise LookupError(f"{SCHEMA} has no $defs/{definition}")
    field = type(f"{definition}Field", (serializers.JSONField,), {"__doc__": f"{definition} of {SCHEMA}"})
    return extend_schema_field({"$ref": f"#/components/schemas/{definition}"})(field)


def contract_enum_field(definition: str) -> type[serializers.CharField]:
    """A string field whose OpenAPI schema is the enum $defs/<definition> of the contract."""
    if "enum" not in contract.load(SCHEMA)["$defs"].get(definition, {}):
        raise LookupError(f"{SCHEMA} has no enum $defs/{definition}")
    field = type(f"{definition}Field", (serializers.CharField,), {"__doc__": f"{definition} of {SCHEMA}"})
    return extend_schema_field({"$ref": f"#/components/schemas/{definition}"})(field)


CeilingSetField = contract_field("CeilingSet")
CeilingsNowField = contract_field("CeilingsNow")
FindingEvidenceField = contract_field("FindingEvidence")
IntervalStatsField = contract_field("IntervalStats")
RunCeilingsField = contract_field("RunCeilings")
RunEvidenceField = contract_field("RunEvidence")
RunInputsField = contract_field("RunInputs")
TimeModesField = contract_field("TimeModes")
DiagnosisField = contract_enum_field("Diagnosis")
LimitField = contract_enum_field("Limit")
ModeVerdictField = contract_enum_field("ModeVerdict")


class PathQuerySerializer(StrictSerializer):
    source = serializers.UUIDField()  # type: ignore[assignment]
    destination = serializers.UUIDField()
    family = family_query_field()
    goal_bps = serializers.FloatField(
        required=False, min_value=1e5, max_value=1e13, help_text="rate the advice aims for (default: link speed)"
    )
    daily_volume_bytes = serializers.IntegerField(
        required=False, min_value=1, max_value=10**18, help_text="volume of the capacity plan (default 13 TiB)"
    )
    runs = serializers.IntegerField(required=False, min_value=1, max_value=500, default=20)


class FindingQuerySerializer(StrictSerializer):
    source = serializers.UUIDField(required=False)  # type: ignore[assignment]
    destination = serializers.UUIDField(required=False)
    family = family_filter_field()
    metric = serializers.ChoiceField(choices=FindingMetric.choices, required=False)
    state = serializers.ChoiceField(choices=FindingState.choices, required=False)
    kind = serializers.ChoiceField(choices=FindingKind.choices, required=False)
    mesh = serializers.CharField(required=False, max_length=100, help_text="only the paths of this mesh")
    since = serializers.DateTimeField(required=False, help_text="findings still open at or cleared after this")
    until = serializers.DateTimeField(required=False, help_text="findings that started before this")
    limit = serializers.IntegerField(required=False, min_value=1, max_value=1000, default=200)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "since" in attrs and "until" in attrs and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError({"until": ["must be after since"]})
        return attrs


class FindingSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    source = AgentRefSerializer()  # type: ignore[assignment]
    destination = AgentRefSerializer()
    family = family_field()
    metric = serializers.CharField()
    rules = serializers.ListField(child=serializers.CharField())
    kind = serializers.CharField()
    state = serializers.CharField()
    started_at = serializers.DateTimeField()
    detected_at = serializers.DateTimeField()
    cleared_at = serializers.DateTimeField(allow_null=True)
    direction = serializers.CharField()
    baseline = serializers.FloatField()
    current = serializers.FloatField()
    magnitude = serializers.FloatField()
    unit = serializers.CharField()
    evidence = FindingEvidenceField(help_text="the numbers the first rule's episode rests on")
    annotation = serializers.CharField(allow_blank=True)


class CoincidenceSerializer(serializers.Serializer[Any]):
    relation = serializers.ChoiceField(
        choices=ChangeRelation.choices,
        help_text="the same path, its reverse, either host, a path sharing an agent or a traced router",
    )
    at = serializers.DateTimeField()
    sentence = serializers.CharField()
    finding_id = serializers.IntegerField(allow_null=True, help_text="the other finding, when it is one")
    source_id = serializers.UUIDField(allow_null=True)
    destination_id = serializers.UUIDField(allow_null=True)
    family = serializers.IntegerField(allow_null=True, help_text="the other finding's path family: 4 or 6")


class FindingChangesSerializer(serializers.Serializer[Any]):
    """What else changed in a finding's moment (from .. to), closest relation first."""

    finding_id = serializers.IntegerField()
    to = serializers.DateTimeField()
    items = CoincidenceSerializer(many=True)

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # "from" is a Python keyword: it cannot be declared as a class attribute.
        fields = super().get_fields()
        fields["from"] = serializers.DateTimeField()
        return fields


class RunAnalysisSerializer(serializers.Serializer[Any]):
    run_id = serializers.UUIDField()
    started_at = serializers.DateTimeField()
    streams = serializers.IntegerField()
    rate_bps = serializers.FloatField(allow_null=True)
    ceiling_bps = serializers.FloatField(allow_null=True)
    fraction_of_ceiling = serializers.FloatField(allow_null=True)
    limit = LimitField()
    diagnosis = DiagnosisField()
    evidence = RunEvidenceField(help_text="label, winning term, evidence sentences, not_converged")
    ceilings = RunCeilingsField(help_text="buffers; terms at the run's min RTT, under load, per RTT mode")
    inputs = RunInputsField(help_text="both hosts' tuning at run time, RTT and loss, with sources")
    interval_stats = IntervalStatsField()
    iperf3_version = serializers.CharField(allow_blank=True)


class AdviceSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField()
    where = serializers.CharField()
    setting = serializers.CharField()
    value = serializers.CharField()
    reason = serializers.CharField()


class CapacityPlanSerializer(serializers.Serializer[Any]):
    daily_volume_bytes = serializers.IntegerField()
    required_bps = serializers.FloatField()
    rate_bps = serializers.FloatField(allow_null=True)
    streams = serializers.IntegerField()
    per_stream_bps = serializers.FloatField(allow_null=True)
    hours_per_day = serializers.FloatField(allow_null=True)
    streams_needed = serializers.IntegerField(
        allow_null=True,
        help_text="streams that keep up, or reach shared_ceiling_bps; behind a policer that starves "
        "today's streams, today's count, paced (the unpaced count is in notes)",
    )
    backlog_grows = serializers.BooleanField(allow_null=True)
    reason = serializers.CharField()
    notes = serializers.ListField(child=serializers.CharField())
    shared_ceiling_bps = serializers.FloatField(
        allow_null=True,
        help_text="what all streams share (a full bottleneck, a policer's estimated rate, the link): "
        "streams_needed stops there",
    )


class PathLabelSerializer(serializers.Serializer[Any]):
    diagnosis = DiagnosisField(help_text="the most common diagnosis of the recent runs")
    agreeing_runs = serializers.IntegerField(help_text="runs with that diagnosis")
    runs = serializers.IntegerField(help_text="recent runs with the newest run's options (at most 11)")
    share = serializers.FloatField()
    summary = serializers.CharField(help_text='e.g. "capacity (9 of 11 runs)"')


class RttModeSerializer(serializers.Serializer[Any]):
    rtt_ms = serializers.FloatField()
    min_rtt_ms = serializers.FloatField()
    flow_count = serializers.IntegerField()
    share = serializers.FloatField()
    src_ports = serializers.ListField(child=serializers.IntegerField())
    trace_path = serializers.ListField(child=serializers.CharField(), allow_null=True)
    ceiling = CeilingSetField(allow_null=True, help_text="the four terms at this mode's RTT")


class DipSerializer(serializers.Serializer[Any]):
    candidate = serializers.BooleanField()
    p_value = serializers.FloatField(allow_null=True)
    samples = serializers.IntegerField()
    reason = serializers.CharField()


class PathModesSerializer(serializers.Serializer[Any]):
    verdict = ModeVerdictField()
    sweep_run_id = serializers.UUIDField(allow_null=True)
    sweep_started_at = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField()
    choice = serializers.CharField(
        allow_blank=True, help_text="why this sweep's modes stand now (newer one-mode sweeps may not overturn them)"
    )
    held_by_sweeps = serializers.IntegerField(help_text="newer one-mode sweeps the modes were held through")
    modes = RttModeSerializer(many=True)
    sweeps = serializers.IntegerField()
    ecmp_sweeps = serializers.IntegerField()
    ping_dip = DipSerializer()
    time_modes = TimeModesField()


class StreamsProbeSerializer(serializers.Serializer[Any]):
    run_id = serializers.UUIDField()
    started_at = serializers.DateTimeField()
    streams = serializers.IntegerField(help_text="the probe's streams")
    probe_bps = serializers.FloatField(help_text="the probe's streams together (received rate)")
    single_bps = serializers.FloatField(help_text="the median of the single-stream runs of the day before it")
    single_runs = serializers.IntegerField()
    ratio = serializers.FloatField(help_text="probe_bps / single_bps")
    kind = serializers.ChoiceField(
        choices=["per_flow", "path", "partly"],
        help_text="per_flow: the streams added up (each flow is held on its own); path: they shared one limit",
    )
    text = serializers.CharField()


class PathAnalysisSerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    destination = AgentRefSerializer()
    family = family_field()
    ceilings_now = CeilingsNowField(allow_null=True, help_text="terms with today's tuning, RTT and loss")
    runs = RunAnalysisSerializer(many=True)
    path_label = PathLabelSerializer(allow_null=True, help_text="the path's label: the consensus of its recent runs")
    modes = PathModesSerializer()
    findings = FindingSerializer(many=True)
    goal_bps = serializers.FloatField(allow_null=True)
    advice = AdviceSerializer(many=True)
    capacity_plan = CapacityPlanSerializer()
    streams_probe = StreamsProbeSerializer(
        allow_null=True,
        help_text="one stream against several: the newest probe of the last 7 days, planned when a single stream "
        "runs far below its ceilings",
    )


FORWARD_LOSS_HELP = (
    "one-way loss source -> destination in the latency intervals that ended in the last hour, without those "
    "Fathom's own throughput tests loaded: the source's sessions (forward), else the destination's (backward); "
    "null without a latency test"
)


class GridCellSerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    destination = AgentRefSerializer()
    family = family_field()
    rate_bps = serializers.FloatField(allow_null=True)
    ceiling_bps = serializers.FloatField(allow_null=True)
    fraction_of_ceiling = serializers.FloatField(allow_null=True)
    diagnosis = DiagnosisField(allow_null=True)
    measured_at = serializers.DateTimeField(allow_null=True)
    loss_fraction = serializers.FloatField(allow_null=True)
    forward_loss_fraction = serializers.FloatField(allow_null=True, help_text=FORWARD_LOSS_HELP)
    rtt_median_ms = serializers.FloatField(
        allow_null=True, help_text="median of the 1-minute RTT medians of the last hour (settled minutes)"
    )
    mode_count = serializers.IntegerField(allow_null=True)
    rtt_mode_verdict = ModeVerdictField(allow_null=True)
    open_findings = serializers.IntegerField()
    last_run_status = serializers.CharField(allow_null=True, help_text="of the newest run of any kind (RunStatus)")
    last_run_test_type = serializers.CharField(allow_null=True)
    last_run_at = serializers.DateTimeField(allow_null=True, help_text="the path's newest data")
    data_age_s = serializers.FloatField(allow_null=True, help_text="seconds since last_run_at; null: no data")
    stale = serializers.BooleanField(help_text="data_age_s exceeds the mesh's stale_after_s")


class GridThresholdsNowSerializer(serializers.Serializer[Any]):
    """The thresholds the grid colours by: the mesh's, over the defaults."""

    fraction_good = serializers.FloatField()
    fraction_bad = serializers.FloatField()
    rate_good_bps = serializers.FloatField()
    rate_bad_bps = serializers.FloatField()
    rtt_warn_ms = serializers.FloatField()
    rtt_crit_ms = serializers.FloatField()
    loss_warn = serializers.FloatField()
    loss_crit = serializers.FloatField()
    stale_after_s = serializers.IntegerField()


class MeshGridSerializer(serializers.Serializer[Any]):
    mesh = serializers.CharField()
    agents = AgentRefSerializer(many=True)
    cells = GridCellSerializer(many=True)
    thresholds = GridThresholdsNowSerializer()
    generated_at = serializers.DateTimeField(help_text="the instant ages and windows are counted from")


class PathListQuerySerializer(StrictSerializer):
    mesh = serializers.CharField(required=False, max_length=200, help_text="only this mesh's pairs")
    family = family_filter_field()


class PathSummarySerializer(serializers.Serializer[Any]):
    """One path's current state, as the Paths list shows it (the grid cell's fields, less the
    mesh-specific ones)."""

    source = AgentRefSerializer()  # type: ignore[assignment]
    destination = AgentRefSerializer()
    family = family_field()
    test_types = serializers.ListField(child=serializers.CharField(), help_text="test types with runs")
    last_run_at = serializers.DateTimeField(allow_null=True, help_text="the path's newest data")
    last_run_status = serializers.CharField(allow_null=True, help_text="of the newest run of any kind (RunStatus)")
    last_run_test_type = serializers.CharField(allow_null=True)
    data_age_s = serializers.FloatField(allow_null=True, help_text="seconds since last_run_at; null: no data")
    rtt_median_ms = serializers.FloatField(
        allow_null=True, help_text="median of the 1-minute RTT medians of the last hour (settled minutes)"
    )
    loss_fraction = serializers.FloatField(allow_null=True, help_text="pings lost in the last hour (settled minutes)")
    forward_loss_fraction = serializers.FloatField(allow_null=True, help_text=FORWARD_LOSS_HELP)
    backward_loss_fraction = serializers.FloatField(
        allow_null=True, help_text="one-way loss destination -> source, as forward_loss_fraction the other way"
    )
    rate_bps = serializers.FloatField(allow_null=True, help_text="newest analysed throughput run of the last 31 days")
    ceiling_bps = serializers.FloatField(allow_null=True)
    fraction_of_ceiling = serializers.FloatField(allow_null=True)
    diagnosis = DiagnosisField(allow_null=True)
    limit = LimitField(allow_null=True)
    measured_at = serializers.DateTimeField(allow_null=True, help_text="start of the run rate_bps is of")
    open_findings = serializers.IntegerField(help_text="open alarms")


class PathListSerializer(serializers.Serializer[Any]):
    generated_at = serializers.DateTimeField(help_text="the instant ages and windows are counted from")
    paths = PathSummarySerializer(many=True)


class PathSparkQuerySerializer(StrictSerializer):
    pair = serializers.ListField(
        child=serializers.CharField(max_length=100),
        min_length=1,
        help_text="<source uuid>:<destination uuid>, with :6 after it for the IPv6 path; repeated (1 to 40)",
    )

    def validate_pair(self, value: list[str]) -> list[tuple[Any, Any, int]]:
        if len(value) > SPARK_PAIRS:
            raise serializers.ValidationError(f"at most {SPARK_PAIRS} pairs a request, not {len(value)}")
        try:
            return [parse_pair(text) for text in value]
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None


class SparkRunSerializer(serializers.Serializer[Any]):
    started_at = serializers.DateTimeField()
    rate_bps = serializers.FloatField(allow_null=True)
    ceiling_bps = serializers.FloatField(allow_null=True)


class SparkSerializer(serializers.Serializer[Any]):
    source = serializers.UUIDField()  # type: ignore[assignment]
    destination = serializers.UUIDField()
    family = family_field()
    rtt_p50_ms = serializers.ListField(
        child=serializers.FloatField(allow_null=True), help_text="hourly RTT medians from `start`, oldest first"
    )
    runs = SparkRunSerializer(many=True, help_text="newest analysed throughput runs of 31 days, oldest first")


class PathSparksSerializer(serializers.Serializer[Any]):
    generated_at = serializers.DateTimeField()
    start = serializers.DateTimeField(help_text="start of the first hourly RTT bucket")
    step_s = serializers.IntegerField()
    sparks = SparkSerializer(many=True)


class TimelineRampStepSerializer(serializers.Serializer[Any]):
    offered_bps = serializers.FloatField()
    delivered_bps = serializers.FloatField()
    lost_fraction = serializers.FloatField()


class TimelineRunSerializer(serializers.Serializer[Any]):
    """One throughput run, in the direction its data flowed."""

    t = serializers.DateTimeField(help_text="the run's start")
    run_id = serializers.UUIDField()
    protocol = serializers.ChoiceField(choices=["tcp", "udp"])
    paced = serializers.BooleanField(help_text="the sender was paced (-b on TCP, or fq-rate)")
    streams = serializers.IntegerField(allow_null=True)
    rate_bps = serializers.FloatField(allow_null=True, help_text="received; a TCP run's steady rate when analysed")
    offered_bps = serializers.FloatField(allow_null=True, help_text="UDP: the rate sent")
    lost_fraction = serializers.FloatField(allow_null=True, help_text="UDP: datagrams lost")
    iperf3_version = serializers.CharField(allow_blank=True)
    client = AgentRefSerializer(help_text="the agent that ran iperf3's client (its version is the one reported)")
    diagnosis = DiagnosisField(allow_null=True, help_text="TCP runs with a stored analysis only")
    limit = LimitField(allow_null=True)
    ceiling_bps = serializers.FloatField(allow_null=True, help_text="the binding ceiling at the run's min RTT")
    ceiling_under_load_bps = serializers.FloatField(allow_null=True, help_text="the same at the RTT under load")
    terms = serializers.DictField(
        child=serializers.FloatField(allow_null=True), allow_null=True, help_text="each term's rate at min RTT"
    )
    ramp = TimelineRampStepSerializer(
        many=True, allow_null=True, help_text="a policer's UDP ramp: its steps; rate_bps is then the rate it measured"
    )
    ramp_lower_bound = serializers.BooleanField(
        allow_null=True,
        help_text="a ramp that lost nothing, or whose slow steps lost too: the policer passes at least rate_bps",
    )


class TimelineModeSerializer(serializers.Serializer[Any]):
    rtt_ms = serializers.FloatField(allow_null=True)
    share = serializers.FloatField(allow_null=True, help_text="of the sweep's flows")
    flow_count = serializers.IntegerField()


class TimelineSweepSerializer(serializers.Serializer[Any]):
    t = serializers.DateTimeField()
    verdict = ModeVerdictField()
    modes = TimelineModeSerializer(many=True, help_text="by RTT, fastest first")


class TimelineDirectionSerializer(serializers.Serializer[Any]):
    runs = TimelineRunSerializer(many=True, help_text="OK throughput runs, oldest first")
    runs_capped = serializers.BooleanField(help_text="more runs in the range: only the newest run_cap are listed")
    sweeps = TimelineSweepSerializer(many=True, help_text="at most run_cap, spread over the range, oldest first")
    sweeps_capped = serializers.BooleanField(help_text="thinned: only the newest sweep of each 1/run_cap of the range")


class TimelineVersionChangeSerializer(serializers.Serializer[Any]):
    t = serializers.DateTimeField(help_text="the first run with the new version")
    agent = AgentRefSerializer()
    old = serializers.CharField()
    new = serializers.CharField()


class TimelineTuningChangeSerializer(serializers.Serializer[Any]):
    t = serializers.DateTimeField(help_text="when the host collected the new facts")
    agent = AgentRefSerializer()
    changes = serializers.DictField(
        child=serializers.ListField(min_length=2, max_length=2), help_text="{key: [old, new]}; null: not reported"
    )


class TimelineFindingSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    path_direction = serializers.ChoiceField(choices=["forward", "reverse"])
    # Plain strings, as FindingSerializer has them: the UI reads labels from /choices/.
    metric = serializers.CharField(help_text="FindingMetric")
    kind = serializers.CharField(help_text="FindingKind")
    state = serializers.CharField(help_text="FindingState")
    started_at = serializers.DateTimeField()
    detected_at = serializers.DateTimeField()
    cleared_at = serializers.DateTimeField(allow_null=True)
    rules = serializers.ListField(child=serializers.CharField())
    direction = serializers.CharField(help_text="of the change: up or down")
    baseline = serializers.FloatField()
    current = serializers.FloatField()
    magnitude = serializers.FloatField()
    unit = serializers.CharField()
    annotation = serializers.CharField(allow_blank=True)
    evidence = FindingEvidenceField()


class TimelineOwnLoadSerializer(serializers.Serializer[Any]):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    tests = serializers.ListField(child=serializers.CharField(), help_text="each test's client -> server")


class PathTimelineSerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    destination = AgentRefSerializer()
    family = family_field()
    to = serializers.DateTimeField()
    run_cap = serializers.IntegerField(help_text="most runs (and sweeps) listed per direction")
    forward = TimelineDirectionSerializer(help_text="data from source to destination")
    reverse = TimelineDirectionSerializer()
    iperf3_changes = TimelineVersionChangeSerializer(many=True)
    tuning_changes = TimelineTuningChangeSerializer(many=True, help_text="either host's, oldest first")
    tuning_capped = serializers.BooleanField()
    findings = TimelineFindingSerializer(many=True, help_text="overlapping the range, both directions, oldest first")
    findings_capped = serializers.BooleanField()
    own_load = TimelineOwnLoadSerializer(
        many=True,
        help_text="when Fathom's own throughput tests loaded either host (merged spans, oldest first): the "
        "analysis leaves the pings of these moments out",
    )
    own_load_capped = serializers.BooleanField(help_text="more tests in the range: only the newest are in the spans")

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # "from" is a Python keyword: it cannot be declared as a class attribute.
        fields = super().get_fields()
        fields["from"] = serializers.DateTimeField()
        return fields
