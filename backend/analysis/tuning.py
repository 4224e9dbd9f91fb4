"""A host's TCP tuning as the ceiling math needs it, read from the facts its agent reported.

Host facts arrive as the kernel prints them ("4096 131072 6291456"); anything missing or
garbled becomes None here, so the ceiling terms built on it say "unknown" with a reason.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


def _int_or_none(text: object) -> int | None:
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text
    if not isinstance(text, str):
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def _triple(text: object, index: int) -> int | None:
    """One value of 'min default max' (tcp_rmem, tcp_wmem): [1] the default, [2] the
    autotuning ceiling."""
    if not isinstance(text, str):
        return None
    parts = text.split()
    if len(parts) != 3:
        return None
    value = _int_or_none(parts[index])
    return value if value is not None and value > 0 else None


def _autotune_ceiling(text: object) -> int | None:
    """What autotuning can reach: the maximum, but never less than the default a socket starts
    with (buffers grow, never shrink: 'min 131072 65536' gives 131072)."""
    default, maximum = _triple(text, 1), _triple(text, 2)
    if maximum is None:
        return None
    return max(maximum, default or 0)


def _interface_for(facts: dict[str, Any], address: str | None) -> dict[str, Any] | None:
    """The interface holding the agent's address; else the only non-loopback one. An address
    on the loopback (a router-style host, a lab host) says nothing of the path: its MTU of
    65536 is no packet the path carries, so the one other interface stands in there too."""
    listed = facts.get("interfaces")
    interfaces = [item for item in listed if isinstance(item, dict)] if isinstance(listed, list) else []
    others = [item for item in interfaces if item.get("name") != "lo"]
    if address:
        for interface in others:
            addresses = interface.get("addresses")
            if isinstance(addresses, list) and any(
                isinstance(a, str) and a.split("/")[0] == address for a in addresses
            ):
                return interface
    return others[0] if len(others) == 1 else None


@dataclass(frozen=True)
class HostTuning:
    kernel: str | None = None
    tcp_rmem_default_bytes: int | None = None
    tcp_rmem_max_bytes: int | None = None
    tcp_wmem_max_bytes: int | None = None
    rmem_max_bytes: int | None = None
    wmem_max_bytes: int | None = None
    adv_win_scale: int | None = None
    congestion_control: str | None = None
    mtu_bytes: int | None = None
    link_rate_bps: float | None = None
    iperf3_version: str | None = None
    # tcp_moderate_rcvbuf=0 turns receive autotuning off; tcp_window_scaling=0 caps windows
    # at 64 KiB (RFC 7323 not negotiated). None: not reported.
    moderate_rcvbuf: bool | None = None
    window_scaling: bool | None = None

    @classmethod
    def from_facts(cls, facts: object, address: str | None = None) -> HostTuning:
        if not isinstance(facts, dict):
            return cls()
        raw_sysctls = facts.get("sysctls")
        sysctls: dict[str, Any] = raw_sysctls if isinstance(raw_sysctls, dict) else {}
        interface = _interface_for(facts, address)
        mtu = _int_or_none(interface.get("mtu")) if interface else None
        speed_mbps = _int_or_none(interface.get("speed_mbps")) if interface else None
        congestion = sysctls.get("net.ipv4.tcp_congestion_control")
        kernel = facts.get("kernel")
        version = facts.get("iperf3_version")
        return cls(
            kernel=kernel if isinstance(kernel, str) and kernel else None,
            tcp_rmem_default_bytes=_triple(sysctls.get("net.ipv4.tcp_rmem"), 1),
            tcp_rmem_max_bytes=_autotune_ceiling(sysctls.get("net.ipv4.tcp_rmem")),
            tcp_wmem_max_bytes=_autotune_ceiling(sysctls.get("net.ipv4.tcp_wmem")),
            rmem_max_bytes=_positive(_int_or_none(sysctls.get("net.core.rmem_max"))),
            wmem_max_bytes=_positive(_int_or_none(sysctls.get("net.core.wmem_max"))),
            adv_win_scale=_int_or_none(sysctls.get("net.ipv4.tcp_adv_win_scale")),
            congestion_control=congestion.strip() if isinstance(congestion, str) and congestion.strip() else None,
            mtu_bytes=_positive(mtu),
            # Virtual interfaces report no speed (or -1): then the link term stays unknown.
            link_rate_bps=speed_mbps * 1e6 if speed_mbps and speed_mbps > 0 else None,
            iperf3_version=version if isinstance(version, str) and version else None,
            moderate_rcvbuf=_flag(sysctls.get("net.ipv4.tcp_moderate_rcvbuf")),
            window_scaling=_flag(sysctls.get("net.ipv4.tcp_window_scaling")),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _positive(value: int | None) -> int | None:
    return value if value is not None and value > 0 else None


def _flag(text: object) -> bool | None:
    value = _int_or_none(text)
    return None if value is None else value != 0
