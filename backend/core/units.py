"""How Fathom prints the quantities a NOC reads, one way everywhere."""

from __future__ import annotations


def rate_text(rate_bps: float | None) -> str:
    """'3.10 Gbit/s' from a gigabit up, '940.0 Mbit/s' below; 'unknown' for None."""
    if rate_bps is None:
        return "unknown"
    if rate_bps >= 1e9:
        return f"{rate_bps / 1e9:.2f} Gbit/s"
    return f"{rate_bps / 1e6:.1f} Mbit/s"


def loss_fraction(lost: int, sent: int) -> float | None:
    """lost / sent, or None when nothing was sent (no packets say nothing of loss)."""
    return lost / sent if sent > 0 else None
