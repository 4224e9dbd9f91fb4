"""Who may change alerting (operators: incidents and silences; admins: rules and channels), and
the audit rows those changes leave, never with a channel's secrets."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any
from unittest import mock

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from alerts.models import Channel, Incident, Rule
from alerts.services.evaluate import evaluate
from alerts.tests.helpers import T0, finding
from audit.models import AuditEntry
from fathom.testing import FathomTestCase

WINDOW = {"starts_at": "2026-11-20T00:00:00Z", "ends_at": "2026-11-21T00:00:00Z", "comment": "fibre works"}
SILENCE = {**WINDOW, "matchers": [{"name": "agent", "value": "athens"}]}
LOSSY = {"name": "Lossy", "kind": "threshold", "metric": "loss", "comparison": "gt", "value": 0.01, "k": 2, "n": 3}
HOOK_URL = "https://hooks.example.org/services/T000/B000/very-secret-path"


def state(value: Any) -> dict[str, Any]:
    """An audit entry's before or after, which the test expects to be there."""
    assert isinstance(value, dict), value
    return value


class AlertsAuditTests(FathomTestCase):
    def call(self, method: str, url: str, body: Any = None, user: Any = None) -> Any:
        client = self.user_client(user or self.owner)
        return getattr(client, method)(f"/api/v1/alerts/{url}", body, format="json")

    def entries(self, object_type: str) -> list[AuditEntry]:
        return list(AuditEntry.objects.filter(object_type=object_type).order_by("id"))

    def test_operators_handle_incidents_and_silences_but_not_rules_or_channels(self) -> None:
        finding(self.athens, self.frankfurt)
        evaluate(T0)
        incident = Incident.objects.get()
        assert self.call("post", f"incidents/{incident.pk}/acknowledge/", {}, self.outsider).status_code == 403
        assert self.call("post", f"incidents/{incident.pk}/acknowledge/", {}, self.operator).status_code == 200
        assert self.call("post", f"incidents/{incident.pk}/resolve/", {}, self.operator).status_code == 200
        assert self.call("post", "silences/", SILENCE, self.outsider).status_code == 403
        silence = self.call("post", "silences/", SILENCE, self.operator)
        assert silence.status_code == 201
        assert self.call("post", f"silences/{silence.json()['id']}/expire/", None, self.outsider).status_code == 403
        rule = Rule.objects.get(name="No data")
        channel = Channel.objects.create(name="ops", kind="email", config={"to": ["noc@example.org"]})
        for user in (self.operator, self.outsider):
            assert self.call("post", "rules/", LOSSY, user).status_code == 403
            assert self.call("patch", f"rules/{rule.pk}/", {"enabled": False}, user).status_code == 403
            assert self.call("delete", f"rules/{rule.pk}/", None, user).status_code == 403
            assert self.call("post", "channels/", {"name": "x", "kind": "email", "config": {}}, user).status_code == 403
            assert self.call("patch", f"channels/{channel.pk}/", {"enabled": False}, user).status_code == 403
            assert self.call("delete", f"channels/{channel.pk}/", None, user).status_code == 403
            assert self.call("get", "rules/", None, user).status_code == 200
            assert self.call("get", "channels/", None, user).status_code == 200
        assert Rule.objects.get(pk=rule.pk).enabled and Channel.objects.filter(pk=channel.pk).exists()
        assert not self.entries("rule") and not self.entries("channel")
        assert [e.action for e in AuditEntry.objects.all()] == ["create"], "acknowledge and resolve are events"

    def test_rule_changes_are_audited(self) -> None:
        made = self.call("post", "rules/", LOSSY)
        assert made.status_code == 201, made.json()
        pk = made.json()["id"]
        assert self.call("patch", f"rules/{pk}/", {"value": 0.02, "severity": "critical"}).status_code == 200
        assert self.call("patch", f"rules/{pk}/", {"value": 0.02}).status_code == 200  # no change: no row
        assert self.call("patch", f"rules/{pk}/", {"k": 5}).status_code == 400  # k > n: no row
        assert self.call("delete", f"rules/{pk}/").status_code == 204
        created, updated, deleted = self.entries("rule")
        assert (created.action, created.object_key, created.object_repr) == ("create", str(pk), "Lossy")
        assert created.before is None and state(created.after)["value"] == 0.01 and state(created.after)["scope"] == []
        assert "updated_at" not in state(created.after) and created.actor_name == "owner"
        assert updated.action == "update"
        assert updated.changes == {"severity": ["warning", "critical"], "value": [0.01, 0.02]}
        assert deleted.action == "delete" and deleted.after is None and state(deleted.before)["value"] == 0.02

    def test_silence_creation_and_expiry_are_audited_once(self) -> None:
        made = self.call("post", "silences/", SILENCE, self.operator)
        pk = made.json()["id"]
        replies = [self.call("post", f"silences/{pk}/expire/", None, self.operator) for _ in range(2)]
        assert [r.status_code for r in replies] == [200, 200]
        assert replies[0].json()["expired_at"] == replies[1].json()["expired_at"] is not None
        created, expired = self.entries("silence")
        assert (created.action, created.object_key, created.actor_name) == ("create", str(pk), "operator")
        assert state(created.after)["matchers"] == [{"name": "agent", "op": "=", "value": "athens"}]
        assert expired.action == "expire" and state(expired.before)["expired_at"] is None
        assert state(expired.after)["expired_at"] == replies[0].json()["expired_at"]

    def test_bad_silences_and_rules_write_nothing(self) -> None:
        assert self.call("post", "silences/", {**SILENCE, "matchers": []}, self.operator).status_code == 400
        assert self.call("post", "rules/", {**LOSSY, "k": 5}).status_code == 400
        assert self.call("post", "channels/", {"name": "x", "kind": "slack", "config": {}}).status_code == 400
        assert not AuditEntry.objects.exists()

    def test_channel_changes_are_audited_without_secrets(self) -> None:
        made = self.call("post", "channels/", {"name": "hook", "kind": "webhook", "config": {"url": HOOK_URL}})
        assert made.status_code == 201, made.json()
        pk, secret = made.json()["id"], made.json()["secret"]
        moved = HOOK_URL.replace("very-secret-path", "another-secret")
        assert self.call("patch", f"channels/{pk}/", {"config": {"url": moved, "secret": secret}}).status_code == 200
        assert self.call("patch", f"channels/{pk}/", {"send_resolved": False}).status_code == 200
        assert self.call("patch", f"channels/{pk}/", {"send_resolved": False}).status_code == 200  # no change
        assert self.call("delete", f"channels/{pk}/").status_code == 204
        created, rotated, toggled, deleted = self.entries("channel")
        assert (created.action, created.object_key, created.object_repr) == ("create", str(pk), "hook (webhook)")
        assert state(created.after)["target"] == "https://hooks.example.org/…"
        assert list(rotated.changes) == ["config_fingerprint"], "a changed URL shows, by fingerprint only"
        assert toggled.changes == {"send_resolved": [True, False]}
        assert deleted.action == "delete" and deleted.after is None
        for entry in (created, rotated, toggled, deleted):
            text = str([entry.before, entry.after, entry.changes])
            assert "secret-path" not in text and "another-secret" not in text and secret not in text
            assert "config" not in (entry.before or {}) and "config" not in (entry.after or {})


class EnsureAlertChannelTests(FathomTestCase):
    """Issue 34 item 3: the command saved a channel unaudited and took webhook secrets on the
    command line, where every user of the host reads them in the process list."""

    def test_secrets_come_from_a_file_or_the_environment_and_the_change_is_audited(self) -> None:
        hook = {"url": "https://hooks.example.net/in", "secret": "whsec_" + "QUFB" * 11}
        with pytest.raises(CommandError, match="secret: give its config with --config-file"):
            call_command("ensure_alert_channel", "--name", "h", "--kind", "webhook", "--config", json.dumps(hook))
        assert not Channel.objects.exists()
        with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
            file.write(json.dumps(hook))
            file.flush()
            call_command("ensure_alert_channel", "--name", "h", "--kind", "webhook", "--config-file", file.name)
        with mock.patch.dict(os.environ, {"NOC_SLACK": json.dumps({"url": "https://hooks.example.net/s"})}):
            call_command("ensure_alert_channel", "--name", "s", "--kind", "slack", "--config-env", "NOC_SLACK")
        with pytest.raises(CommandError, match="UNSET_VARIABLE is not set"):
            call_command("ensure_alert_channel", "--name", "x", "--kind", "slack", "--config-env", "UNSET_VARIABLE")
        mail = '{"to": ["noc@example.org"]}'
        call_command("ensure_alert_channel", "--name", "m", "--kind", "email", "--config", mail)
        assert Channel.objects.get(name="h").config["secret"] == hook["secret"]
        entries = AuditEntry.objects.filter(object_type="channel", action="create")
        assert sorted(entry.object_repr for entry in entries) == ["h", "m", "s"]
        assert all(entry.via == "command" for entry in entries)
        assert hook["secret"] not in json.dumps([entry.after for entry in entries])
