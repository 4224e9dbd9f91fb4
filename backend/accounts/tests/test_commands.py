"""Changes made from the server's shell are in the audit log too, as "command"."""

from __future__ import annotations

import io
from pathlib import Path
from tempfile import TemporaryDirectory

from django.contrib.auth.models import User
from django.core.management import call_command

from audit.models import AuditEntry
from fathom.testing import FathomTestCase


class ShellChangesAreAuditedTests(FathomTestCase):
    def test_ensure_admin_creates_once_and_a_rerun_that_changes_nothing_leaves_no_row(self) -> None:
        with TemporaryDirectory() as tmp:
            password_file = Path(tmp) / "pw"
            for _ in range(2):
                call_command(
                    "ensure_admin", "--username", "root-admin", "--password-file", password_file, stdout=io.StringIO()
                )
            entries = list(AuditEntry.objects.filter(object_type="person"))
            assert [(e.action, e.via, e.object_repr) for e in entries] == [("create", "command", "root-admin")]
            assert entries[0].after is not None and entries[0].after["role"] == "admin"
            assert password_file.read_text().strip() not in str(entries[0].__dict__)
            # A demoted admin is made admin again, and the log says so.
            User.objects.filter(username="root-admin").update(is_superuser=False)
            call_command(
                "ensure_admin", "--username", "root-admin", "--password-file", password_file, stdout=io.StringIO()
            )
            assert AuditEntry.objects.filter(object_type="person").latest("id").changes == {
                "role": ["operator", "admin"]
            }

    def test_an_enrolment_token_from_the_shell_is_audited_without_its_secret(self) -> None:
        out = io.StringIO()
        call_command("create_enrollment_token", "--note", "lab", stdout=out)
        entry = AuditEntry.objects.get(object_type="enrollment_token")
        assert entry.action == "create" and entry.via == "command" and entry.actor_name
        assert out.getvalue().strip() not in str(entry.__dict__)
