"""Rows the analysis reads, made the way agents report them: host facts, throughput runs
with their intervals, pings, latency intervals and flow sweeps, and stored run analyses."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from analysis.choices import Diagnosis
from analysis.models import RunAnalysis
from inventory.models import Agent, HostFactsSnapshot
from measurements.models import FlowSample, LatencyInterval, PingSample, Run, ThroughputInterval

MIB = 2**20
T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def facts(rmem_max: int, wmem_max: int = 4 * MIB, iperf3: str = "3.12") -> dict[str, Any]:
    return {
        "collected_at": T0.isoformat(),
        "kernel": "6.18.0-1-amd64",
        "iperf3_version": iperf3,
        "interfaces": [],
        "sysctls": {
            "net.ipv4.tcp_rmem": f"4096 87380 {rmem_max}",
            "net.ipv4.tcp_wmem": f"4096 16384 {wmem_max}",
            "net.ipv4.tcp_adv_win_scale": "1",
            "net.ipv4.tcp_congestion_control": "cubic",
        },
    }


def snapshot(agent: Agent, at: datetime, body: dict[str, Any]) -> None:
    HostFactsSnapshot.objects.create(agent=agent, collected_at=at, facts=body, digest=uuid.uuid4().hex)


def throughput_run(
    source: Agent,
    destination: Agent,
    at: datetime,
    rate_bps: float,
    *,
    min_rtt_us: int = 7900,
    mean_rtt_us: int = 8600,
    reverse: bool = False,
    snd_wnd: int | None = 3_300_000,
    snd_cwnd: int | None = 5_000_000,
    retransmits: int = 0,
) -> Run:
    run = Run.objects.create(
        id=uuid.uuid4(),
        started_at=at,
        ended_at=at + timedelta(seconds=13),
        source_id=source.pk,
        destination_id=destination.pk,
        target=destination.address,
        test_type="throughput",
        test_id="tput",
        status="ok",
        params={"parallel": 1, "window_bytes": 0, "reverse": reverse, "congestion": "cubic", "mss": 0},
        summary={
            "receiver_bits_per_s": rate_bps,
            "min_rtt_us": min_rtt_us,
            "mean_rtt_us": mean_rtt_us,
            "max_snd_wnd": snd_wnd,
            "streams": 1,
            "reverse": reverse,
            "sender_congestion": "cubic",
            "iperf3_version": "3.12",
        },
    )
    ThroughputInterval.objects.bulk_create(
        ThroughputInterval(
            time=at + timedelta(seconds=second + 3),
            run_id=run.id,
            interval_index=second,
            source_id=source.pk,
            destination_id=destination.pk,
            stream=5,
            start_s=second,
            end_s=second + 1,
            omitted=False,
            sender=True,
            bytes=int(rate_bps / 8),
            bits_per_s=rate_bps,
            retransmits=retransmits,
            snd_cwnd_bytes=snd_cwnd,
            snd_wnd_bytes=snd_wnd,
            rtt_us=mean_rtt_us,
            pmtu=9000,
        )
        for second in range(10)
    )
    return run


def udp_run(
    source: Agent,
    destination: Agent,
    at: datetime,
    offered_bps: float,
    delivered_bps: float,
    lost_percent: float,
    *,
    reverse: bool = False,
) -> Run:
    """A paced UDP throughput run as the agent reports it (iperf3 -u -b)."""
    summary = {"sender_bits_per_s": offered_bps, "receiver_bits_per_s": delivered_bps, "lost_percent": lost_percent}
    return _udp_row(source, destination, at, "udp", {"bitrate_bps": int(offered_bps)}, summary, reverse=reverse)


def _udp_row(
    source: Agent,
    destination: Agent,
    at: datetime,
    test_id: str,
    params: dict[str, Any],
    summary: dict[str, Any],
    *,
    reverse: bool,
) -> Run:
    return Run.objects.create(
        id=uuid.uuid4(),
        started_at=at,
        ended_at=at + timedelta(seconds=10),
        source_id=source.pk,
        destination_id=destination.pk,
        target=destination.address,
        test_type="throughput",
        test_id=test_id,
        status="ok",
        params={"udp": True, "reverse": reverse, **params},
        summary={"protocol": "UDP", "reverse": reverse, **summary},
    )


def ramp_run(
    source: Agent, destination: Agent, at: datetime, steps: list[tuple[float, float, float]], *, reverse: bool = False
) -> Run:
    """A policer's UDP ramp as ingest stores it: options in params, the steps beside the summary.
    Each step is (offered, delivered, lost percent)."""
    rates = [int(offered) for offered, _, _ in steps]
    ramp = [
        {"offered_bps": int(offered), "started_s": 3.0 * index, "duration_s": 2.0,
         "sender_bits_per_s": delivered / (1 - lost / 100) if lost < 100 else offered,
         "receiver_bits_per_s": delivered, "packets": 1000, "lost_packets": int(lost * 10),
         "lost_percent": lost, "jitter_ms": 0.1}
        for index, (offered, delivered, lost) in enumerate(steps)
    ]  # fmt: skip
    params = {"bitrate_bps": rates[0], "ramp_bps": rates}
    summary = {"sender_bits_per_s": 1e8, "receiver_bits_per_s": 7e7, "lost_percent": 20.0, "ramp": ramp}
    return _udp_row(source, destination, at, "tput", params, summary, reverse=reverse)


def pings(source: Agent, destination: Agent, start: datetime, count: int, rtt_ms: float, every_s: float = 10) -> None:
    run_id = uuid.uuid4()
    PingSample.objects.bulk_create(
        PingSample(
            time=start + timedelta(seconds=index * every_s),
            run_id=run_id,
            sample_index=index,
            source_id=source.pk,
            destination_id=destination.pk,
            seq=index,
            rtt_ms=rtt_ms + (index % 3) * 0.01,
        )
        for index in range(count)
    )


def flow_sweep(source: Agent, destination: Agent, at: datetime, fast_ms: float, slow_ms: float) -> Run:
    run = Run.objects.create(
        id=uuid.uuid4(),
        started_at=at,
        ended_at=at + timedelta(seconds=2),
        source_id=source.pk,
        destination_id=destination.pk,
        target=destination.address,
        test_type="flowsweep",
        test_id="sweep",
        status="ok",
    )
    samples = []
    for flow in range(16):
        base = slow_ms if flow % 4 == 3 else fast_ms
        for seq in range(10):
            samples.append(
                FlowSample(
                    time=at + timedelta(milliseconds=flow * 10 + seq),
                    run_id=run.id,
                    sample_index=flow * 10 + seq,
                    source_id=source.pk,
                    destination_id=destination.pk,
                    flow=flow,
                    src_port=40000 + flow,
                    seq=seq,
                    rtt_ms=base + 0.01 * ((seq * 7 + flow) % 10),
                )
            )
    FlowSample.objects.bulk_create(samples)
    return run


def member(index: int, scale: float, ceiling_bps: float) -> dict[str, Any]:
    """A run's ceilings JSON with only the ECMP member the rules read (analysis.runs.RunMember)."""
    return {"member": {"index": index, "count": 2, "rtt_ms": 23.0 / scale, "ceiling_bps": ceiling_bps, "scale": scale}}


def analysis_row(
    source: Agent,
    destination: Agent,
    at: datetime,
    rate_bps: float,
    iperf3: str = "3.12",
    *,
    ceiling_bps: float = 4e9,
    ceilings: dict[str, Any] | None = None,
    diagnosis: str = Diagnosis.RECEIVE_WINDOW,
) -> None:
    RunAnalysis.objects.create(
        run_id=uuid.uuid4(),
        started_at=at,
        source=source,
        destination=destination,
        streams=1,
        rate_bps=rate_bps,
        ceiling_bps=ceiling_bps,
        limit="receive_window",
        diagnosis=diagnosis,
        ceilings=ceilings or {},
        inputs={},
        interval_stats={},
        evidence={},
        iperf3_version=iperf3,
    )


def latency_sessions(
    source: Agent,
    destination: Agent,
    start: datetime,
    minutes: int,
    *,
    forward_ms: float = 20.0,
    backward_ms: float = 5.0,
    forward_lost: int = 0,
    backward_lost: int = 0,
    reflector_synchronized: bool = True,
    own_load: bool = False,
    one_way_only: bool = False,
) -> None:
    """A minute interval of source's session towards destination for each minute from start;
    one_way_only: an OWAMP session's, without a way back."""
    rows = []
    for index in range(minutes):
        jitter = (index % 3) * 0.01
        delays = {
            f"{direction}_{key}": base + offset + jitter
            for direction, base in (("forward", forward_ms), ("backward", backward_ms))
            for key, offset in (("min_ms", 0.0), ("p50_ms", 0.1), ("p90_ms", 0.2), ("p99_ms", 0.3), ("max_ms", 0.5))
            if direction == "forward" or not one_way_only
        }
        rows.append(
            LatencyInterval(
                time=start + index * timedelta(minutes=1),
                ended_at=start + (index + 1) * timedelta(minutes=1),
                run_id=uuid.uuid4(),
                source_id=source.pk,
                destination_id=destination.pk,
                sent=600,
                answered=600 - forward_lost - (0 if one_way_only else backward_lost),
                duplicates=0,
                malformed=0,
                forward_lost=forward_lost,
                backward_lost=None if one_way_only else backward_lost,
                round_trip_min_ms=None if one_way_only else forward_ms + backward_ms,
                sender_synchronized=True,
                sender_error_ms=0.001,
                reflector_synchronized=reflector_synchronized,
                reflector_error_ms=0.001,
                own_load=own_load,
                **delays,
            )
        )
    LatencyInterval.objects.bulk_create(rows)
