"""Creates (or refreshes) a superuser whose password lives in a 0600 file.

`make demo` runs it on every start: the first run generates the password, later runs reuse
it, so the printed credentials stay valid across restarts.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from accounts.services import person_snapshot
from audit.choices import AuditAction, AuditObject
from audit.services import Actor, record
from core.roles import Role, apply_role


class Command(BaseCommand):
    help = "Create or refresh a superuser; the password is read from --password-file or generated into it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument("--password-file", required=True, type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        username: str = options["username"]
        password_file: Path = options["password_file"]
        if password_file.exists():
            password = password_file.read_text().strip()
        else:
            password = secrets.token_urlsafe(15)
            password_file.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(password + "\n")
        with transaction.atomic():
            user = User.objects.select_for_update().filter(username=username).first()
            before = person_snapshot(user) if user else None
            user = user or User(username=username)
            apply_role(user, Role.ADMIN)
            user.is_active = True
            user.set_password(password)
            user.save()
            verb = AuditAction.UPDATE if before else AuditAction.CREATE
            record(Actor.command(), verb, AuditObject.PERSON, user.pk, username, before, person_snapshot(user))
        self.stdout.write(f"username: {username}  password: {password}")
