"""Personal API tokens: shown once, hashed at rest, scoped, expiring, revocable, audited."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.choices import TokenScope
from accounts.models import ApiToken
from accounts.services import create_api_token, token_digest
from audit.models import AuditEntry
from fathom.testing import FathomTestCase


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


class ApiTokenTests(FathomTestCase):
    def create(self, client: APIClient, **body: object) -> dict[str, object]:
        reply = client.post("/api/v1/api-tokens/", {"name": "script", "expires_at": None, **body}, format="json")
        assert reply.status_code == 201, reply.json()
        body_out: dict[str, object] = reply.json()
        return body_out

    def test_created_once_stored_as_digest_and_listed_without_secret(self) -> None:
        client = self.user_client(self.operator)
        issued = self.create(client, scope="write")
        plaintext = str(issued["token"])
        assert plaintext.startswith("fpt_") and issued["prefix"] == plaintext[:12]
        row = ApiToken.objects.get(pk=int(str(issued["id"])))
        assert row.token_sha256 == token_digest(plaintext) and plaintext not in str(row.__dict__)
        listed = client.get("/api/v1/api-tokens/").json()
        assert [t["id"] for t in listed] == [issued["id"]]
        assert "token" not in listed[0] and listed[0]["state"] == "active" and listed[0]["user"] == "operator"
        entry = AuditEntry.objects.get(object_type="api_token", object_key=str(issued["id"]))
        assert entry.action == "create" and entry.actor_name == "operator" and plaintext not in str(entry.after)

    def test_token_acts_as_its_owner_with_the_owners_role(self) -> None:
        plaintext = str(self.create(self.user_client(self.operator), scope="write")["token"])
        client = bearer(plaintext)
        assert client.get("/api/v1/auth/me/").json()["role"] == "operator"
        # An operator's write token changes meshes, without a CSRF header...
        reply = client.post("/api/v1/meshes/", {"name": "by-script", "all_agents": True}, format="json")
        assert reply.status_code == 201, reply.json()
        # ...and leaves an audit row saying which token spoke.
        entry = AuditEntry.objects.filter(object_type="mesh").latest("id")
        assert entry.actor_name == "operator" and entry.via == f"token {plaintext[:12]}"
        # but cannot do what an operator may not.
        assert client.get("/api/v1/people/").status_code == 403

    def test_read_token_is_refused_for_unsafe_methods(self) -> None:
        plaintext = str(self.create(self.user_client(self.owner), scope="read")["token"])
        client = bearer(plaintext)
        assert client.get("/api/v1/paths/").status_code == 200
        reply = client.post("/api/v1/meshes/", {"name": "nope", "all_agents": True}, format="json")
        assert reply.status_code == 403 and reply.json()["detail"] == "this API token is read-only"
        assert client.delete("/api/v1/meshes/default/").status_code == 403

    def test_expired_revoked_unknown_and_disabled_owner_are_refused(self) -> None:
        issued = create_api_token(self.outsider, "soon", TokenScope.READ, timezone.now() + timedelta(seconds=1))
        ApiToken.objects.filter(pk=issued.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        assert bearer(issued.plaintext).get("/api/v1/paths/").status_code == 401
        for text in ("fpt_" + "x" * 43, "garbage", "fpt_", "fpt_" + "y" * 500):
            assert bearer(text).get("/api/v1/paths/").status_code == 401
        alive = create_api_token(self.outsider, "alive", TokenScope.READ, None)
        assert bearer(alive.plaintext).get("/api/v1/paths/").status_code == 200
        reply = self.user_client(self.outsider).delete(f"/api/v1/api-tokens/{alive.token.pk}/")
        assert reply.status_code == 204
        assert bearer(alive.plaintext).get("/api/v1/paths/").status_code == 401
        assert self.user_client(self.outsider).get("/api/v1/api-tokens/").json()[0]["state"] == "revoked"
        other = create_api_token(self.outsider, "other", TokenScope.READ, None)
        self.outsider.is_active = False
        self.outsider.save()
        assert bearer(other.plaintext).get("/api/v1/paths/").status_code == 401

    def test_last_used_is_recorded(self) -> None:
        issued = create_api_token(self.outsider, "probe", TokenScope.READ, None)
        assert issued.token.last_used_at is None
        bearer(issued.plaintext).get("/api/v1/paths/")
        issued.token.refresh_from_db()
        assert issued.token.last_used_at is not None

    def test_bad_input_gives_field_errors_and_creates_nothing(self) -> None:
        client = self.user_client(self.outsider)
        past = (timezone.now() - timedelta(days=1)).isoformat()
        cases = [
            ({"name": "x", "expires_at": past}, "expires_at"),
            ({"name": "x", "expires_at": "tomorrow"}, "expires_at"),
            ({"name": "", "expires_at": None}, "name"),
            ({"name": "x", "expires_at": None, "scope": "root"}, "scope"),
            ({"name": "x", "expires_at": None, "owner": "owner"}, "owner"),
            ({"name": "x"}, "expires_at"),
        ]
        for body, field in cases:
            reply = client.post("/api/v1/api-tokens/", body, format="json")
            assert reply.status_code == 400 and field in reply.json(), (body, reply.json())
        assert client.post("/api/v1/api-tokens/", "[1]", content_type="application/json").status_code == 400
        assert not ApiToken.objects.exists() and not AuditEntry.objects.exists()

    def test_people_see_their_own_tokens_and_admins_everyones(self) -> None:
        mine = create_api_token(self.outsider, "mine", TokenScope.READ, None).token
        theirs = create_api_token(self.operator, "theirs", TokenScope.WRITE, None).token
        viewer = self.user_client(self.outsider)
        assert [t["id"] for t in viewer.get("/api/v1/api-tokens/").json()] == [mine.pk]
        assert viewer.get("/api/v1/api-tokens/?all=true").status_code == 403
        assert viewer.delete(f"/api/v1/api-tokens/{theirs.pk}/").status_code == 404
        admin = self.user_client(self.owner)
        assert {t["id"] for t in admin.get("/api/v1/api-tokens/?all=true").json()} == {mine.pk, theirs.pk}
        assert admin.get("/api/v1/api-tokens/?all=maybe").status_code == 400
        assert admin.delete(f"/api/v1/api-tokens/{theirs.pk}/").status_code == 204
        theirs.refresh_from_db()
        assert theirs.revoked_at is not None
        entry = AuditEntry.objects.get(object_type="api_token", action="revoke")
        assert entry.actor_name == "owner" and "revoked_at" in entry.changes


class TokenLimitTests(FathomTestCase):
    """Issue 34 item 2: tokens outlived their limits."""

    def test_a_token_can_neither_mint_tokens_nor_set_passwords(self) -> None:
        admin_token = create_api_token(self.owner, "admin script", TokenScope.WRITE, None).plaintext
        scripted = bearer(admin_token)
        minted = scripted.post("/api/v1/api-tokens/", {"name": "child", "expires_at": None}, format="json")
        assert minted.status_code == 403 and "signed-in session" in minted.json()["detail"]
        person = f"/api/v1/people/{self.operator.pk}/"
        reset = scripted.patch(person, {"password": "taken-over-pass-99"}, format="json")
        assert reset.status_code == 403 and "signed-in session" in reset.json()["detail"]
        self.operator.refresh_from_db()
        assert self.operator.check_password("operator-pass-1234")
        assert scripted.patch(person, {"email": "op@noc.example"}, format="json").status_code == 200
        body = {"username": "mallory", "password": "chosen-long-pass-9", "role": "admin", "email": ""}
        added = scripted.post("/api/v1/people/", body, format="json")
        assert added.status_code == 403 and "signed-in session" in added.json()["detail"]
        assert not User.objects.filter(username="mallory").exists()
        assert ApiToken.objects.count() == 1

    def test_a_password_reset_revokes_the_persons_tokens(self) -> None:
        token = create_api_token(self.operator, "ops script", TokenScope.READ, None).plaintext
        assert bearer(token).get("/api/v1/auth/me/").status_code == 200
        admin = self.user_client(self.owner)
        reply = admin.patch(f"/api/v1/people/{self.operator.pk}/", {"password": "reset-long-pass-77"}, format="json")
        assert reply.status_code == 200, reply.json()
        assert bearer(token).get("/api/v1/auth/me/").status_code == 401
        assert ApiToken.objects.get().state() == "revoked"

    def test_the_sites_longest_lifetime_caps_every_token(self) -> None:
        client = self.user_client(self.operator)
        with self.settings(API_TOKEN_MAX_DAYS=30):
            too_long = (timezone.now() + timedelta(days=60)).isoformat()
            refused = client.post("/api/v1/api-tokens/", {"name": "x", "expires_at": too_long}, format="json")
            assert refused.status_code == 400 and "at most 30 days" in str(refused.json()["expires_at"])
            # A browser clock an hour ahead asking for the longest: that, not a refusal.
            ahead = (timezone.now() + timedelta(days=30, hours=1)).isoformat()
            capped = client.post("/api/v1/api-tokens/", {"name": "z", "expires_at": ahead}, format="json").json()
            assert parse(capped["expires_at"]) <= timezone.now() + timedelta(days=30), capped
            unbounded = client.post("/api/v1/api-tokens/", {"name": "y", "expires_at": None}, format="json").json()
            ends = timezone.now() + timedelta(days=30)
            assert abs((parse(unbounded["expires_at"]) - ends).total_seconds()) < 60, unbounded
            # A token made before the limit was lowered ends by it too.
            old = create_api_token(self.operator, "old", TokenScope.READ, None)
            ApiToken.objects.filter(pk=old.token.pk).update(
                created_at=timezone.now() - timedelta(days=31), expires_at=None
            )
            assert bearer(old.plaintext).get("/api/v1/auth/me/").status_code == 401
            listed = {t["name"]: t for t in client.get("/api/v1/api-tokens/").json()}
            assert listed["old"]["state"] == "expired" and listed["y"]["state"] == "active"
        assert ApiToken.objects.filter(name="x").count() == 0


def parse(text: object) -> datetime:
    return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
