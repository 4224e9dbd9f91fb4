"""Whether a binary is static, read from its ELF header (no `file` on a fresh machine)."""

from __future__ import annotations

import struct
from pathlib import Path

PT_INTERP = 3  # the ELF program header naming a dynamic loader


def is_static(binary: Path) -> bool:
    """A 64-bit little-endian ELF executable with no PT_INTERP header loads no shared library."""
    data = binary.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, f"{binary} is not an ELF64 little-endian binary"
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    return all(struct.unpack_from("<I", data, phoff + i * phentsize)[0] != PT_INTERP for i in range(phnum))
