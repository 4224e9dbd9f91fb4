"""A local SMTP server for the demo: every message it accepts is kept as an .eml file, so a
newcomer sees exactly what an alert email looks like without a mail relay."""

from __future__ import annotations

import signal
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from django.core.management.base import BaseCommand, CommandParser


class _Keep:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.count = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.count += 1
        name = f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{self.count:04d}.eml"
        (self.directory / name).write_bytes(envelope.original_content)
        return "250 kept"


class Command(BaseCommand):
    help = "Run a local SMTP server that keeps every message as an .eml file (the demo's mailbox)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", required=True, help="where the .eml files go")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8025)

    def handle(self, *args: Any, **options: Any) -> None:
        directory = Path(options["dir"])
        directory.mkdir(parents=True, exist_ok=True)
        controller = Controller(_Keep(directory), hostname=options["host"], port=options["port"])
        controller.start()
        self.stdout.write(f"mailbox: SMTP on {options['host']}:{options['port']}, messages in {directory}")
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        stop.wait()
        controller.stop()
