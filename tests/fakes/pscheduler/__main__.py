"""Runs the fake pScheduler node as a process.

    python -m tests.fakes.pscheduler --port 0 --state-dir var/fake-ps --speed 10

Prints one JSON line when ready: {"base_url", "fingerprint_sha256", "cert_path", "control_url", "pid"};
stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from .server import DEFAULT_FIXTURES, FakePScheduler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.pscheduler", description=__doc__.split("\n")[1])
    parser.add_argument("--port", type=int, default=0, help="HTTPS port for the pScheduler API (0: any free port)")
    parser.add_argument("--control-port", type=int, default=0, help="plain HTTP port for /_fake/ (0: any)")
    parser.add_argument("--state-dir", type=Path, default=None, help="keeps the TLS certificate across restarts")
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES, help="recorded pScheduler results")
    parser.add_argument("--hostname", default="localhost", help="what /hostname answers")
    parser.add_argument("--api-host", default=None, help="host[:port] in archived hrefs (default 127.0.0.1:<port>)")
    parser.add_argument("--clock-offset", type=float, default=0.0, help="node clock minus real time, seconds")
    parser.add_argument("--speed", type=float, default=1.0, help="runs take 1/speed of their real time")
    parser.add_argument("--live-iperf3", action="store_true", help="single-ended throughput runs real iperf3")
    parser.add_argument("--requester-class", choices=("default", "friendly", "hostile"), default="default")
    args = parser.parse_args(argv)

    fake = FakePScheduler(
        args.fixtures,
        hostname=args.hostname,
        api_host=args.api_host,
        clock_offset_s=args.clock_offset,
        speed=args.speed,
        port=args.port,
        control_port=args.control_port,
        state_dir=args.state_dir,
        live_iperf3=args.live_iperf3,
        requester_class=args.requester_class,
    ).start()
    stopped = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopped.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    ready = {
        "base_url": fake.base_url,
        "fingerprint_sha256": fake.fingerprint_sha256,
        "cert_path": str(fake.cert_path),
        "control_url": fake.control_url,
        "pid": os.getpid(),
    }
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()
    stopped.wait()
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
