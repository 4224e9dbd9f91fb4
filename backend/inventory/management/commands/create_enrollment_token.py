"""Prints a new single-use enrolment token (alone on stdout, for scripts)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from audit.choices import AuditAction, AuditObject
from audit.services import Actor, record
from inventory.api.serializers import MAX_TOKEN_LIFETIME_S, MIN_TOKEN_LIFETIME_S, token_snapshot
from inventory.services import TokenRequestError, create_enrollment_token


class Command(BaseCommand):
    help = "Create a single-use enrolment token for `fathom-agent enroll`; prints the token alone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--expires-in", type=int, default=3600, help="lifetime in seconds (default 3600)")
        parser.add_argument("--note", default="", help="what the token is for, shown in token lists")
        parser.add_argument("--name", default="", help="the only agent name the token may enrol")
        parser.add_argument(
            "--rekey",
            action="store_true",
            help="re-key the enrolled agent --name: a new credential for it, same id and history",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        expires_in_s: int = options["expires_in"]
        if not MIN_TOKEN_LIFETIME_S <= expires_in_s <= MAX_TOKEN_LIFETIME_S:
            raise CommandError(f"--expires-in must be between {MIN_TOKEN_LIFETIME_S} and {MAX_TOKEN_LIFETIME_S} s")
        note: str = options["note"]
        if len(note) > 200:
            raise CommandError("--note must be at most 200 characters")
        with transaction.atomic():
            try:
                issued = create_enrollment_token(expires_in_s, note, agent_name=options["name"], rekey=options["rekey"])
            except TokenRequestError as exc:
                raise CommandError(str(exc)) from exc
            token = issued.token
            verb = AuditAction.REKEY if token.rekey_agent_id is not None else AuditAction.CREATE
            record(
                Actor.command(), verb, AuditObject.ENROLLMENT_TOKEN, token.pk, str(token), after=token_snapshot(token)
            )
        self.stdout.write(issued.plaintext)
