from __future__ import annotations

import io
import os
import stat
from datetime import timedelta
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from audit.models import AuditEntry
from fathom.testing import FathomTestCase
from inventory.models import Agent, EnrollmentToken
from inventory.services import TokenRequestError, create_enrollment_token, decommission_agent, digest, revoke_agent

ENROLL_URL = "/api/v1/agents/enroll/"
TOKENS_URL = "/api/v1/enrollment-tokens/"


def state(value: Any) -> dict[str, Any]:
    """An audit entry's before or after, which the test expects to be there."""
    assert isinstance(value, dict), value
    return value


class EnrollmentTokenApiTests(FathomTestCase):
    def test_staff_create_token_shown_once_and_stored_as_digest(self) -> None:
        reply = self.user_client(self.operator).post(TOKENS_URL, {"expires_in_s": 600, "note": "athens"}, format="json")
        assert reply.status_code == 201, reply.content
        token = reply.json()["token"]
        assert token.startswith("fet_") and len(token) == 47
        stored = EnrollmentToken.objects.get(pk=reply.json()["id"])
        assert stored.token_sha256 == digest(token)
        assert token not in str(EnrollmentToken.objects.filter(pk=stored.pk).values().get())
        listed = self.user_client(self.operator).get(TOKENS_URL).json()
        assert "token" not in listed[0] and listed[0]["state"]["value"] == "active"

    def test_outsider_cannot_create_tokens(self) -> None:
        reply = self.user_client(self.outsider).post(TOKENS_URL, {}, format="json")
        assert reply.status_code == 403
        assert self.client.post(TOKENS_URL, {}, format="json").status_code == 403

    def test_token_lifetime_bounds_and_unknown_keys(self) -> None:
        client = self.user_client(self.operator)
        before = EnrollmentToken.objects.count()
        assert client.post(TOKENS_URL, {"expires_in_s": 10}, format="json").status_code == 400
        reply = client.post(TOKENS_URL, {"expires_in": 600}, format="json")
        assert reply.status_code == 400 and "expires_in" in reply.json()
        assert EnrollmentToken.objects.count() == before

    def test_revoke(self) -> None:
        issued = create_enrollment_token(600)
        assert self.user_client(self.operator).delete(f"{TOKENS_URL}{issued.token.pk}/").status_code == 204
        body = {"token": issued.plaintext, "name": "x", "address": "198.18.3.9"}
        reply = self.client.post(ENROLL_URL, body, format="json")
        assert reply.status_code == 403 and reply.json()["detail"] == "enrolment token revoked"

    def test_viewers_may_not_even_list_tokens(self) -> None:
        assert self.user_client(self.outsider).get(TOKENS_URL).status_code == 403
        assert self.user_client(self.owner).get(TOKENS_URL).status_code == 200

    def test_issuing_and_revoking_tokens_is_audited_without_the_token(self) -> None:
        client = self.user_client(self.operator)
        made = client.post(TOKENS_URL, {"expires_in_s": 600, "note": "geneva", "agent_name": "geneva"}, format="json")
        rekey = client.post(TOKENS_URL, {"agent_name": "athens", "rekey": True}, format="json")
        assert made.status_code == rekey.status_code == 201
        created, rekeyed = AuditEntry.objects.filter(object_type="enrollment_token").order_by("id")
        assert (created.action, created.object_key, created.before) == ("create", str(made.json()["id"]), None)
        assert created.after == {
            "prefix": made.json()["prefix"],
            "note": "geneva",
            "agent_name": "geneva",
            "rekey": False,
            "expires_at": made.json()["expires_at"],
            "revoked_at": None,
        }
        assert (rekeyed.action, state(rekeyed.after)["rekey"], state(rekeyed.after)["agent_name"]) == (
            "rekey",
            True,
            "athens",
        )
        for entry in (created, rekeyed):
            assert made.json()["token"] not in str(entry.after) and rekey.json()["token"] not in str(entry.after)
        for _ in range(2):
            assert client.delete(f"{TOKENS_URL}{made.json()['id']}/").status_code == 204
        [revoked] = AuditEntry.objects.filter(object_type="enrollment_token", action="revoke")
        assert revoked.object_key == str(made.json()["id"]) and list(revoked.changes) == ["revoked_at"]

    def test_no_token_for_a_decommissioned_name(self) -> None:
        decommission_agent(self.athens)
        tokens = EnrollmentToken.objects.count()
        client = self.user_client(self.operator)
        for body in ({"agent_name": "athens"}, {"agent_name": "athens", "rekey": True}):
            reply = client.post(TOKENS_URL, body, format="json")
            assert reply.status_code == 400, body
            assert "decommissioned agent" in reply.json()["agent_name"][0]
        assert EnrollmentToken.objects.count() == tokens and not AuditEntry.objects.exists()

    def test_token_list_query_count_is_flat(self) -> None:
        for index in range(5):
            create_enrollment_token(600, f"t{index}")
        client = self.user_client(self.operator)
        # session + user + tokens with used_by joined
        with self.assertNumQueries(3):
            assert client.get(TOKENS_URL).status_code == 200


class EnrollTests(FathomTestCase):
    def test_enrol_new_agent(self) -> None:
        issued = create_enrollment_token(600)
        body = {"token": issued.plaintext, "name": "geneva", "address": "198.18.3.1", "agent_version": "0.1.0"}
        reply = self.client.post(ENROLL_URL, body, format="json")
        assert reply.status_code == 201, reply.content
        agent = Agent.objects.get(name="geneva")
        assert str(agent.pk) == reply.json()["agent_id"]
        assert agent.credential_sha256 == digest(reply.json()["credential"])
        issued.token.refresh_from_db()
        assert issued.token.used_by == agent and issued.token.used_at is not None

    def test_token_is_single_use(self) -> None:
        issued = create_enrollment_token(600)
        body = {"token": issued.plaintext, "name": "geneva", "address": "198.18.3.1"}
        assert self.client.post(ENROLL_URL, body, format="json").status_code == 201
        again = self.client.post(ENROLL_URL, {**body, "name": "other"}, format="json")
        assert again.status_code == 403 and again.json()["detail"] == "enrolment token already used"
        assert not Agent.objects.filter(name="other").exists()

    def test_expired_and_unknown_tokens(self) -> None:
        issued = create_enrollment_token(600)
        EnrollmentToken.objects.filter(pk=issued.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        body = {"token": issued.plaintext, "name": "x", "address": "198.18.3.9"}
        reply = self.client.post(ENROLL_URL, body, format="json")
        assert reply.status_code == 403 and reply.json()["detail"] == "enrolment token expired"
        reply = self.client.post(ENROLL_URL, {**body, "token": "fet_nope"}, format="json")
        assert reply.status_code == 403 and reply.json()["detail"] == "unknown enrolment token"
        assert not Agent.objects.filter(name="x").exists()

    def test_malformed_requests_store_nothing(self) -> None:
        issued = create_enrollment_token(600)
        cases = [
            {"token": issued.plaintext, "name": "Bad Name!", "address": "a"},
            {"token": issued.plaintext, "name": "ok"},
            {"token": issued.plaintext, "name": "ok", "address": "a", "role": "admin"},
        ]
        for body in cases:
            reply = self.client.post(ENROLL_URL, body, format="json")
            assert reply.status_code == 400, body
        reply = self.client.post(ENROLL_URL, b"{not json", content_type="application/json")
        assert reply.status_code == 400 and "JSON parse error" in reply.json()["detail"]
        issued.token.refresh_from_db()
        assert issued.token.used_at is None and not Agent.objects.filter(name="ok").exists()


class EnrolmentBindingTests(FathomTestCase):
    """A token enrols a new agent, or the one name it is bound to; only a re-key token issued
    for an enrolled agent replaces its credential; a revoked agent stays revoked."""

    def enrol(self, token: str, name: str, address: str = "198.18.1.1") -> Any:
        return self.client.post(ENROLL_URL, {"token": token, "name": name, "address": address}, format="json")

    def athens_still_works(self, credential: str | None = None) -> bool:
        client = self.agent_client(self.athens, credential or self.athens_credential)
        return bool(client.get("/api/v1/agent/plan/").status_code == 200)

    def test_a_fresh_token_does_not_replace_an_enrolled_agent(self) -> None:
        issued = create_enrollment_token(600)
        reply = self.enrol(issued.plaintext, "athens", "198.18.1.9")
        assert reply.status_code == 403
        assert "already enrolled" in reply.json()["detail"] and "--rekey" in reply.json()["detail"]
        assert self.athens_still_works()
        self.athens.refresh_from_db()
        assert self.athens.address == "198.18.1.1"
        issued.token.refresh_from_db()
        assert issued.token.used_at is None

    def test_a_revoked_agent_is_never_re_enrolled(self) -> None:
        revoke_agent(self.athens)
        reply = self.enrol(create_enrollment_token(600).plaintext, "athens")
        assert reply.status_code == 403 and "revoked" in reply.json()["detail"]
        self.athens.refresh_from_db()
        assert self.athens.revoked_at is not None
        assert self.athens.credential_sha256 == digest(self.athens_credential)
        with pytest.raises(TokenRequestError, match="revoked"):
            create_enrollment_token(600, agent_name="athens", rekey=True)

    def test_a_rekey_token_issued_before_a_revocation_does_not_lift_it(self) -> None:
        rekey = create_enrollment_token(600, agent_name="athens", rekey=True)
        revoke_agent(self.athens)
        reply = self.enrol(rekey.plaintext, "athens")
        assert reply.status_code == 403 and "revoked" in reply.json()["detail"]
        self.athens.refresh_from_db()
        assert self.athens.revoked_at is not None

    def test_a_token_bound_to_a_name_enrols_only_that_name(self) -> None:
        issued = create_enrollment_token(600, agent_name="geneva")
        reply = self.enrol(issued.plaintext, "lisbon", "198.18.3.2")
        assert reply.status_code == 403 and reply.json()["detail"] == "this enrolment token is for agent 'geneva'"
        assert not Agent.objects.filter(name="lisbon").exists()
        assert self.enrol(issued.plaintext, "geneva", "198.18.3.1").status_code == 201
        with pytest.raises(TokenRequestError, match="already enrolled"):
            create_enrollment_token(600, agent_name="geneva")

    def test_a_rekey_token_replaces_the_credential_of_its_agent_only(self) -> None:
        issued = create_enrollment_token(600, agent_name="athens", rekey=True)
        assert self.enrol(issued.plaintext, "frankfurt", "198.18.2.1").status_code == 403
        reply = self.enrol(issued.plaintext, "athens")
        assert reply.status_code == 201, reply.content
        assert reply.json()["agent_id"] == str(self.athens.pk)
        assert not self.athens_still_works()
        assert self.athens_still_works(reply.json()["credential"])
        with pytest.raises(TokenRequestError, match="no enrolled agent"):
            create_enrollment_token(600, agent_name="nowhere", rekey=True)
        with pytest.raises(TokenRequestError, match="names the agent"):
            create_enrollment_token(600, rekey=True)

    def test_staff_issue_bound_and_rekey_tokens_through_the_api(self) -> None:
        client = self.user_client(self.operator)
        reply = client.post(TOKENS_URL, {"agent_name": "athens", "rekey": True}, format="json")
        assert reply.status_code == 201, reply.content
        assert reply.json()["agent_name"] == "athens" and reply.json()["rekey"] is True
        refused = client.post(TOKENS_URL, {"agent_name": "athens"}, format="json")
        assert refused.status_code == 400 and "re-key" in refused.json()["agent_name"][0]
        newest = client.get(TOKENS_URL).json()[0]
        assert (newest["agent_name"], newest["rekey"]) == ("athens", True)


class ManagementCommandTests(FathomTestCase):
    def test_create_enrollment_token_prints_only_the_token(self) -> None:
        out = io.StringIO()
        call_command("create_enrollment_token", "--note", "cli", "--expires-in", "120", stdout=out)
        token = out.getvalue().strip()
        assert EnrollmentToken.objects.filter(token_sha256=digest(token), note="cli").exists()
        with pytest.raises(CommandError, match="between"):
            call_command("create_enrollment_token", "--expires-in", "5", stdout=io.StringIO())

    def test_create_enrollment_token_binds_a_name_or_rekeys_an_agent(self) -> None:
        out = io.StringIO()
        call_command("create_enrollment_token", "--name", "geneva", stdout=out)
        bound = EnrollmentToken.objects.get(token_sha256=digest(out.getvalue().strip()))
        assert bound.agent_name == "geneva" and bound.rekey_agent is None
        out = io.StringIO()
        call_command("create_enrollment_token", "--name", "athens", "--rekey", stdout=out)
        rekey = EnrollmentToken.objects.get(token_sha256=digest(out.getvalue().strip()))
        assert rekey.agent_name == "athens" and rekey.rekey_agent == self.athens
        for args, message in [
            (["--rekey"], "names the agent"),
            (["--name", "athens"], "already enrolled"),
            (["--name", "Bad Name"], "1-63 characters"),
        ]:
            with pytest.raises(CommandError, match=message):
                call_command("create_enrollment_token", *args, stdout=io.StringIO())

    def test_ensure_admin_generates_then_reuses_a_0600_password_file(self) -> None:
        with TemporaryDirectory() as tmp:
            password_file = Path(tmp) / "secrets" / "admin_password"
            out = io.StringIO()
            call_command("ensure_admin", "--username", "boss", "--password-file", str(password_file), stdout=out)
            password = password_file.read_text().strip()
            assert stat.S_IMODE(os.stat(password_file).st_mode) == 0o600
            assert password in out.getvalue()
            call_command("ensure_admin", "--username", "boss", "--password-file", str(password_file), stdout=out)
            assert password_file.read_text().strip() == password
            assert self.client.login(username="boss", password=password)
