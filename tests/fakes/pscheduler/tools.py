"""pScheduler's tool plugins, as far as the fake pScheduler needs them: real iperf3 and ping
output in, the result a perfSONAR node would report out.

Written from how pscheduler-tool-iperf3 (iperf3_parser.py, run, merged-results) and
pscheduler-tool-ping (run, merged-results, python-pscheduler's ping.py) build their results,
so that the fake serves what a node serves, quirks included:
- iperf3: fields renamed one for one (socket -> stream-id, bits_per_second -> throughput-bits,
  snd_cwnd -> tcp-window-size, ...), the sender's end summary (sum_sent, else sum) with the
  receiver's rate beside it, per-stream summaries from end.streams[].sender (TCP) or .udp;
  iperf3's own sender flag, rttvar, pmtu, snd_wnd and CPU figures are dropped.
- ping: iputils lines parsed with pScheduler's patterns (duplicates marked "(DUP!)" do not
  match and are lost), times as ISO 8601 durations rounded to the microsecond like isodate,
  `loss` a fraction (but 100.0 when ping printed no statistics line, as pScheduler does),
  a failed run merged to just {"schema": 1, "succeeded": false}. Host names are not looked
  up (no DNS here), so round trips carry no `hostname`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

# iperf3 JSON key -> pScheduler throughput result key (iperf3_parser.rename_json).
_IPERF3_RENAMES = {
    "socket": "stream-id",
    "start": "start",
    "end": "end",
    "bytes": "throughput-bytes",
    "bits_per_second": "throughput-bits",
    "omitted": "omitted",
    "jitter_ms": "jitter",
    "packets": "sent",
    "lost_packets": "lost",
    "retransmits": "retransmits",
    "snd_cwnd": "tcp-window-size",
    "rtt": "rtt",
    "mean_rtt": "rtt",
}


def _renamed(iperf3_object: Mapping[str, Any]) -> dict[str, Any]:
    return {_IPERF3_RENAMES[key]: value for key, value in iperf3_object.items() if key in _IPERF3_RENAMES}


def _failure(error: str, diags: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {"succeeded": False, "error": error}
    if diags is not None:
        result["diags"] = diags
    return result


def iperf3_to_result(iperf3_json: dict[str, Any], *, exit_status: int = 0, diags: str | None = None) -> dict[str, Any]:
    """The throughput result pScheduler's iperf3 tool makes of `iperf3 -J` output.

    `exit_status`: iperf3's; a failing iperf3 is reported as "iperf3 returned an error: ..."
    (what a node shows for a closed port), a document with "error" but status 0 as "Iperf3
    failed: ...". `diags`, when given, is kept as the result's diags (pScheduler puts the
    command line and iperf3's output there, "Participant N:" per end once merged).
    """
    if exit_status != 0:
        return _failure(f"iperf3 returned an error: {iperf3_json.get('error', '')}", diags)
    if "error" in iperf3_json:
        return _failure(f"Iperf3 failed: {iperf3_json['error']}", diags)
    if "intervals" not in iperf3_json:
        return _failure("iperf3 output is missing required field 'intervals'", diags)
    intervals = [
        {
            "streams": [_renamed(stream) for stream in interval.get("streams", [])],
            "summary": _renamed(interval.get("sum", {})),
        }
        for interval in iperf3_json["intervals"]
    ]
    if "end" not in iperf3_json:
        return _failure("iperf3 output is missing required field 'end'", diags)
    end = iperf3_json["end"]
    if "sum_sent" in end:
        summary = _renamed(end["sum_sent"])
    elif "sum" in end:
        summary = _renamed(end["sum"])
    else:
        return _failure("iperf3 output has neither 'sum_sent' nor 'sum' field, and one of them is required", diags)
    if "sum_received" in end:
        summary["receiver-throughput-bits"] = _renamed(end["sum_received"])["throughput-bits"]
    streams = []
    for stream in end.get("streams", []):
        if "udp" in stream:
            streams.append(_renamed(stream["udp"]))
        elif "sender" in stream:
            streams.append(_renamed(stream["sender"]))
    result: dict[str, Any] = {
        "succeeded": True,
        "intervals": intervals,
        "summary": {"streams": streams, "summary": summary},
    }
    if diags is not None:
        result["diags"] = diags
    return result


def iso_duration(seconds: float) -> str:
    """A duration the way pScheduler writes one (isodate.duration_isoformat of a timedelta):
    microseconds at most, trailing zeros dropped, days but never weeks, "P0D" for nothing."""
    delta = timedelta(seconds=seconds)
    micros = abs((delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds)
    whole, micros = divmod(micros, 1_000_000)
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    text = f"{days}D" if days else ""
    if hours or minutes or secs or micros:
        text += "T"
        text += f"{hours}H" if hours else ""
        text += f"{minutes}M" if minutes else ""
        if secs or micros:
            text += (f"{secs}.{micros:06d}".rstrip("0") if micros else str(secs)) + "S"
    return "P" + (text or "0D")


# python-pscheduler's ping.py patterns.
_REPLY = re.compile(r"^([0-9]+) bytes\s+from (.*):\s+icmp_[rs]eq=([0-9]+)\s+ttl=([0-9]+)\s+time=([0-9.]+) ms$")
_ERROR = re.compile(r"^From\s+([^\s]+)\s+icmp_seq=([0-9]+)\s+(.*)$")
_LOSS = re.compile(r"^([0-9]+) packets transmitted, ([0-9]+) received, ([0-9.]+)% packet loss")
_TIMES = re.compile(r"^rtt min/avg/max/mdev\s*=\s*([0-9.]+)/([0-9.]+)/([0-9.]+)/([0-9.]+)\s+ms$")
_ICMP_ERRORS = {
    "Destination Net Unreachable": "net-unreachable",
    "Destination Host Unreachable": "host-unreachable",
    "Destination Protocol Unreachable": "protocol-unreachable",
    "Destination Port Unreachable": "port-unreachable",
    "Source Route Failed": "source-route-failed",
    "Packet filtered": "communication-administratively-prohibited",
}


def _icmp_error(text: str) -> str | None:
    if text in _ICMP_ERRORS:
        return _ICMP_ERRORS[text]
    return "fragmentation-needed-and-df-set" if text.startswith("Frag needed and DF set") else None


def ping_to_result(
    ping_output: str, spec: Mapping[str, Any], *, exit_status: int = 0, stderr: str = ""
) -> dict[str, Any]:
    """The merged rtt result pScheduler's ping tool makes of iputils ping's output for the
    rtt test `spec` (its `count`, default 5, bounds the sequence numbers kept)."""
    if (exit_status != 0 and stderr) or not ping_output:
        return {"schema": 1, "succeeded": False}
    count = int(spec.get("count", 5))
    roundtrips: list[dict[str, Any]] = []
    stats: dict[str, Any] = {}
    for raw in ping_output.split("\n"):
        line = raw.strip()
        if reply := _REPLY.match(line):
            length, ip, seq, ttl, rtt_ms = reply.groups()
            if int(seq) <= count:
                roundtrips.append(
                    {
                        "seq": int(seq),
                        "length": int(length),
                        "ip": ip.split("%")[0],
                        "ttl": int(ttl),
                        "rtt": iso_duration(float(rtt_ms) / 1000.0),
                    }
                )
            continue
        if error := _ERROR.match(line):
            ip, seq, text = error.groups()
            if int(seq) <= count:
                roundtrips.append({"seq": int(seq), "ip": ip, "error": _icmp_error(text)})
            continue
        if times := _TIMES.match(line):
            for key, value in zip(("min", "mean", "max", "stddev"), times.groups(), strict=True):
                stats[key] = iso_duration(float(value) / 1000.0)
            break
        if loss := _LOSS.match(line):
            stats["sent"], stats["received"] = int(loss.group(1)), int(loss.group(2))
            stats["loss"] = float(loss.group(3)) / 100
    seen: set[int] = set()
    duplicates = reorders = 0
    previous: int | None = None
    for roundtrip in roundtrips:
        if roundtrip["seq"] in seen:
            duplicates += 1
            continue
        if roundtrip.get("error"):
            continue
        seen.add(roundtrip["seq"])
        if previous is not None and roundtrip["seq"] < previous:
            reorders += 1
        previous = roundtrip["seq"]
    sent, received = stats.get("sent", 0), stats.get("received", 0)
    result: dict[str, Any] = {"schema": 1, "succeeded": True}
    for key in ("min", "max", "mean", "stddev"):
        if key in stats:
            result[key] = stats[key]
    result.update(
        {
            "roundtrips": roundtrips,
            "sent": sent,
            "received": received,
            "lost": sent - received,
            "loss": stats.get("loss", 100.0),
            "duplicates": duplicates,
            "reorders": reorders,
        }
    )
    return result
