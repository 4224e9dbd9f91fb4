"""Creates or updates a channel from the shell (the demo's mailbox, a deployment's script),
checked as the API checks it and written to the audit log as the shell user's change.

A Slack or webhook URL is a secret (anyone holding it can post), and so is a webhook's
signing secret: their config comes from a file or an environment variable, never the command
line, which every user of the host can read in the process list."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from alerts.api.serializers import ChannelSerializer
from alerts.api.views import channel_snapshot
from alerts.models import Channel
from audit.choices import AuditAction, AuditObject
from audit.services import Actor, record
from core import strict_json

SECRET_KINDS = ("slack", "webhook")


class Command(BaseCommand):
    help = (
        'Create or update an alert channel: --kind email --config \'{"to": ["noc@example.org"]}\'; '
        "Slack and webhooks take --config-file FILE or --config-env VARIABLE"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--kind", required=True, choices=["email", "slack", "webhook"])
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--config", help="the channel's config as JSON (email only: it holds no secret)")
        source.add_argument("--config-file", help="a file holding the config as JSON")
        source.add_argument("--config-env", help="an environment variable holding the config as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        config = self._config(options)
        existing = Channel.objects.filter(name=options["name"]).first()
        body = {"name": options["name"], "kind": options["kind"], "config": config}
        serializer = ChannelSerializer(existing, data=body)
        if not serializer.is_valid():
            raise CommandError(f"invalid channel: {json.dumps(serializer.errors)}")
        with transaction.atomic():
            before = channel_snapshot(existing) if existing is not None else None
            channel = serializer.save()
            record(
                Actor.command(),
                AuditAction.UPDATE if existing is not None else AuditAction.CREATE,
                AuditObject.CHANNEL,
                channel.pk,
                channel.name,
                before,
                channel_snapshot(channel),
            )
        self.stdout.write(f"channel {channel.name} ({channel.kind}) {'updated' if existing else 'created'}")

    def _config(self, options: dict[str, Any]) -> Any:
        if options["config"] is not None:
            if options["kind"] in SECRET_KINDS:
                raise CommandError(
                    f"a {options['kind']} channel's URL is a secret: give its config with --config-file or"
                    " --config-env, not on the command line"
                )
            text, source = options["config"], "--config"
        elif options["config_file"] is not None:
            try:
                text, source = Path(options["config_file"]).read_text(), options["config_file"]
            except OSError as exc:
                raise CommandError(f"--config-file: {exc}") from exc
        else:
            variable = options["config_env"]
            text, source = os.environ.get(variable, ""), f"${variable}"
            if not text:
                raise CommandError(f"--config-env: {variable} is not set")
        try:
            return strict_json.loads(text)
        except ValueError as exc:
            raise CommandError(f"{source} is not JSON: {exc}") from exc
