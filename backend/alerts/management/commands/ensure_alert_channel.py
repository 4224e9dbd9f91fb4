"""Creates or updates a channel from the shell (the demo's mailbox, a deployment's script)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from alerts.api.serializers import ChannelSerializer
from alerts.models import Channel


class Command(BaseCommand):
    help = 'Create or update an alert channel: --kind email --config \'{"to": ["noc@example.org"]}\''

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--kind", required=True, choices=["email", "slack", "webhook"])
        parser.add_argument("--config", required=True, help="the channel's config as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            config = json.loads(options["config"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--config is not JSON: {exc}") from exc
        existing = Channel.objects.filter(name=options["name"]).first()
        serializer = ChannelSerializer(
            existing, data={"name": options["name"], "kind": options["kind"], "config": config}
        )
        if not serializer.is_valid():
            raise CommandError(f"invalid channel: {json.dumps(serializer.errors)}")
        channel = serializer.save()
        self.stdout.write(f"channel {channel.name} ({channel.kind}) {'updated' if existing else 'created'}")
