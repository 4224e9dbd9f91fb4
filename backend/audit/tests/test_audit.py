"""The audit log: rows written with their change, diffs, redaction, and the admins' view."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from audit.choices import AuditAction, AuditObject
from audit.models import AuditEntry
from audit.services import Actor, changes, plain, record
from fathom.testing import FathomTestCase


def test_changes_are_dotted_leaves_and_lists_compare_whole() -> None:
    before = {"name": "a", "spec": {"duration_s": 10, "streams": 1}, "members": [1, 2]}
    after = {"name": "a", "spec": {"duration_s": 20, "streams": 1}, "members": [2, 1], "enabled": True}
    assert changes(before, after) == {
        "enabled": [None, True],
        "members": [[1, 2], [2, 1]],
        "spec.duration_s": [10, 20],
    }
    assert changes(None, {"a": 1}) == {"a": [None, 1]}
    assert changes({"a": 1}, {"a": 1}) == {}


def test_secrets_never_reach_the_log() -> None:
    snapshot = plain({"config": {"url": "https://hooks"}, "nested": {"password": "p", "secret": "s"}, "ok": 1})
    assert snapshot == {"config": "(redacted)", "nested": {"password": "(redacted)", "secret": "(redacted)"}, "ok": 1}


@pytest.mark.django_db(transaction=True)
def test_record_refuses_to_run_outside_the_changes_transaction() -> None:
    with pytest.raises(RuntimeError, match="inside the transaction"):
        record(Actor.command("x"), AuditAction.CREATE, AuditObject.MESH, 1, "m", None, {"a": 1})
    assert not AuditEntry.objects.exists()


class AuditLogTests(FathomTestCase):
    def write(self, **fields: object) -> AuditEntry:
        with transaction.atomic():
            entry = record(
                Actor.command("tester"),
                AuditAction(str(fields.get("action", "update"))),
                AuditObject(str(fields.get("object_type", "mesh"))),
                fields.get("key", 1),
                str(fields.get("repr", "core")),
                {"enabled": True},
                {"enabled": False},
            )
        assert entry is not None
        return entry

    def test_an_update_that_changed_nothing_leaves_no_row(self) -> None:
        with transaction.atomic():
            assert record(Actor.command("x"), AuditAction.UPDATE, AuditObject.MESH, 1, "m", {"a": 1}, {"a": 1}) is None
        assert not AuditEntry.objects.exists()

    def test_admins_read_and_filter_the_log(self) -> None:
        first = self.write(object_type="mesh", repr="core-mesh")
        second = self.write(object_type="agent", action="rename", repr="athens")
        AuditEntry.objects.filter(pk=first.pk).update(at=timezone.now() - timedelta(days=2))
        client = self.user_client(self.owner)
        assert [e["id"] for e in client.get("/api/v1/audit/").json()] == [second.pk, first.pk]
        assert [e["id"] for e in client.get("/api/v1/audit/?object_type=mesh").json()] == [first.pk]
        assert [e["id"] for e in client.get("/api/v1/audit/?action=rename").json()] == [second.pk]
        assert [e["id"] for e in client.get("/api/v1/audit/?q=CORE").json()] == [first.pk]
        assert [e["id"] for e in client.get("/api/v1/audit/?actor=tester&limit=1").json()] == [second.pk]
        assert [e["id"] for e in client.get(f"/api/v1/audit/?before_id={second.pk}").json()] == [first.pk]
        since = (timezone.now() - timedelta(days=1)).isoformat().replace("+00:00", "Z")
        assert [e["id"] for e in client.get("/api/v1/audit/", {"since": since}).json()] == [second.pk]
        entry = client.get("/api/v1/audit/?object_type=agent").json()[0]
        assert entry["changes"] == {"enabled": [True, False]} and entry["via"] == "command"

    def test_bad_filters_are_field_errors(self) -> None:
        client = self.user_client(self.owner)
        for query, field in (
            ("object_type=planet", "object_type"),
            ("action=explode", "action"),
            ("since=yesterday", "since"),
            ("limit=0", "limit"),
            ("limit=100000", "limit"),
            ("before_id=-1", "before_id"),
            ("since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", "until"),
            ("colour=red", "colour"),
        ):
            reply = client.get(f"/api/v1/audit/?{query}")
            assert reply.status_code == 400 and field in reply.json(), (query, reply.json())

    def test_only_admins_read_the_log(self) -> None:
        for user in (self.operator, self.outsider):
            assert self.user_client(user).get("/api/v1/audit/").status_code == 403
