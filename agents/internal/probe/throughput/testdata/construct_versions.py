#!/usr/bin/env python3
"""Builds the iperf3 -J documents of versions not installed here from runs captured with
iperf3 3.12 on this machine: each field list below is the format string that version's
src/iperf_api.c (and iperf_client_api.c, iperf_tcp.c, iperf_udp.c) hands to
iperf_json_printf, read at its git tag in esnet/iperf. Numbers stay those of the real
3.12 run; only the layout changes. Run from this directory: python3 construct_versions.py
"""
import json

TEST_START = {
    "3.1.3": "protocol num_streams blksize omit duration bytes blocks reverse",
    "3.7": "protocol num_streams blksize omit duration bytes blocks reverse tos",
    "3.9": "protocol num_streams blksize omit duration bytes blocks reverse tos",
    "3.16": "protocol num_streams blksize omit duration bytes blocks reverse tos target_bitrate bidir fqrate",
    "3.17": "protocol num_streams blksize omit duration bytes blocks reverse tos target_bitrate bidir fqrate interval",
}
TCP_SENDER_INTERVAL = {
    "3.1.3": "socket start end seconds bytes bits_per_second retransmits snd_cwnd rtt omitted",
    "3.7": "socket start end seconds bytes bits_per_second retransmits snd_cwnd rtt rttvar pmtu omitted sender",
    "3.9": "socket start end seconds bytes bits_per_second retransmits snd_cwnd rtt rttvar pmtu omitted sender",
    "3.16": "socket start end seconds bytes bits_per_second retransmits snd_cwnd snd_wnd rtt rttvar pmtu omitted sender",
}
TCP_SENDER_INTERVAL["3.17"] = TCP_SENDER_INTERVAL["3.16"]
END_TCP_SENDER = {
    "3.1.3": "socket start end seconds bytes bits_per_second retransmits max_snd_cwnd max_rtt min_rtt mean_rtt",
    "3.7": "socket start end seconds bytes bits_per_second retransmits max_snd_cwnd max_rtt min_rtt mean_rtt sender",
    "3.9": "socket start end seconds bytes bits_per_second retransmits max_snd_cwnd max_rtt min_rtt mean_rtt sender",
    "3.16": "socket start end seconds bytes bits_per_second retransmits max_snd_cwnd max_snd_wnd max_rtt min_rtt mean_rtt sender",
}
END_TCP_SENDER["3.17"] = END_TCP_SENDER["3.16"]
# Start fields by version: sock_bufsize/sndbuf_actual/rcvbuf_actual and target_bitrate
# are absent in 3.1.3; fq_rate appears in 3.16.
START_DROP = {"3.1.3": {"sock_bufsize", "sndbuf_actual", "rcvbuf_actual", "target_bitrate"}}
OLD_UDP_END = {"3.1.3", "3.7", "3.9"}  # UDP sum_sent/sum_received arrived in 3.11
NO_SENDER_FLAG = {"3.1.3"}  # the "sender" booleans arrived in 3.7 (bidirectional mode)
NO_CONGESTION = {"3.1.3"}  # sender/receiver_tcp_congestion arrived in 3.2


def pick(obj, keys):
    return {k: obj[k] for k in keys.split() if k in obj}


def drop_sender(obj):
    return {k: v for k, v in obj.items() if k != "sender"}


def convert(doc, version):
    out = json.loads(json.dumps(doc))
    start = out["start"]
    start["version"] = "iperf " + version
    ts = dict(start.get("test_start", {}))
    ts.setdefault("bidir", 0)
    ts.setdefault("fqrate", 0)
    ts.setdefault("interval", 1)
    if "test_start" in start:
        start["test_start"] = pick(ts, TEST_START[version])
    for key in START_DROP.get(version, ()):
        start.pop(key, None)
    if version in ("3.16", "3.17") and "target_bitrate" in start:
        rebuilt = {}
        for k, v in start.items():
            rebuilt[k] = v
            if k == "target_bitrate":
                rebuilt["fq_rate"] = 0
        out["start"] = start = rebuilt
    for interval in out.get("intervals", []):
        for i, s in enumerate(interval["streams"]):
            if "snd_cwnd" in s:
                s = pick(s, TCP_SENDER_INTERVAL[version])
            if version in NO_SENDER_FLAG:
                s = drop_sender(s)
            interval["streams"][i] = s
        if version in NO_SENDER_FLAG and "sum" in interval:
            interval["sum"] = drop_sender(interval["sum"])
    end = out.get("end", {})
    for stream in end.get("streams", []):
        if "sender" in stream and "max_snd_cwnd" in stream["sender"]:
            stream["sender"] = pick(stream["sender"], END_TCP_SENDER[version])
        if version in NO_SENDER_FLAG:
            for side in list(stream):
                stream[side] = drop_sender(stream[side])
    if start.get("test_start", {}).get("protocol") == "UDP" and version in OLD_UDP_END:
        end.pop("sum_sent", None)
        end.pop("sum_received", None)
    if version in NO_SENDER_FLAG:
        for key in ("sum", "sum_sent", "sum_received"):
            if key in end:
                end[key] = drop_sender(end[key])
    if version in NO_CONGESTION:
        end.pop("sender_tcp_congestion", None)
        end.pop("receiver_tcp_congestion", None)
    return out


BUILD = [
    ("3.1.3", "tcp-single"), ("3.1.3", "tcp-reverse"), ("3.1.3", "udp-loss"), ("3.1.3", "busy"),
    ("3.7", "tcp-parallel3"), ("3.7", "udp-reverse-loss"),
    ("3.9", "udp-loss"), ("3.9", "udp-parallel2"), ("3.9", "tcp-reverse-parallel2"),
    ("3.16", "tcp-single"), ("3.16", "udp"), ("3.16", "tcp-reverse"),
    ("3.17", "tcp-parallel3"), ("3.17", "udp-reverse"), ("3.17", "busy"), ("3.17", "interrupted-sigterm"),
]

if __name__ == "__main__":
    for version, case in BUILD:
        with open(f"iperf3-3.12-{case}.json") as f:
            doc = json.load(f)
        with open(f"iperf3-{version}-{case}.json", "w") as f:
            json.dump(convert(doc, version), f, indent="\t")
            f.write("\n")
