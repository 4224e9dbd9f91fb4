"""People and roles, managed by admins; the last admin cannot lock everyone out."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User
from django.test import override_settings
from rest_framework.test import APIClient

from accounts.choices import TokenScope
from accounts.services import create_api_token
from audit.models import AuditEntry
from fathom.testing import FathomTestCase


class PeopleTests(FathomTestCase):
    def test_admin_adds_a_person_who_then_signs_in_with_the_role(self) -> None:
        admin = self.user_client(self.owner)
        body = {"username": "maria", "email": "maria@noc.example", "password": "long-enough-pass-9", "role": "operator"}
        reply = admin.post("/api/v1/people/", body, format="json")
        assert reply.status_code == 201, reply.json()
        assert reply.json()["role"] == "operator" and "password" not in reply.json()
        assert self.client.login(username="maria", password="long-enough-pass-9")
        assert self.client.get("/api/v1/auth/me/").json()["role"] == "operator"
        entry = AuditEntry.objects.get(object_type="person", action="create")
        assert entry.actor_name == "owner" and entry.after is not None and entry.after["role"] == "operator"
        assert "long-enough-pass-9" not in str(entry.__dict__)

    def test_role_change_disable_and_password_reset_are_audited(self) -> None:
        admin = self.user_client(self.owner)
        url = f"/api/v1/people/{self.outsider.pk}/"
        assert admin.patch(url, {"role": "operator"}, format="json").json()["role"] == "operator"
        self.outsider.refresh_from_db()
        assert self.outsider.is_staff and not self.outsider.is_superuser
        token = create_api_token(self.outsider, "t", TokenScope.READ, None).token
        assert admin.patch(url, {"is_active": False}, format="json").json()["is_active"] is False
        token.refresh_from_db()
        assert token.revoked_at is not None  # a disabled person's scripts stop too
        assert admin.patch(url, {"password": "another-long-pass-7"}, format="json").status_code == 200
        changes = [e.changes for e in AuditEntry.objects.filter(object_type="person").order_by("id")]
        assert changes == [
            {"role": ["viewer", "operator"]},
            {"is_active": [True, False]},
            {"password_changed": [None, True]},
        ]

    def test_the_last_admin_can_be_neither_demoted_nor_disabled(self) -> None:
        admin = self.user_client(self.owner)
        url = f"/api/v1/people/{self.owner.pk}/"
        reply = admin.patch(url, {"role": "viewer"}, format="json")
        assert reply.status_code == 400 and "last active admin" in reply.json()["role"][0]
        reply = admin.patch(url, {"is_active": False}, format="json")
        assert reply.status_code == 400 and "last active admin" in reply.json()["is_active"][0]
        self.owner.refresh_from_db()
        assert self.owner.is_superuser and self.owner.is_active
        # With a second admin, the first may step down.
        admin.patch(f"/api/v1/people/{self.operator.pk}/", {"role": "admin"}, format="json")
        assert admin.patch(url, {"role": "viewer"}, format="json").json()["role"] == "viewer"

    def test_bad_input_gives_field_errors_and_changes_nothing(self) -> None:
        admin = self.user_client(self.owner)
        before = User.objects.count()
        cases = [
            ({"username": "operator", "password": "long-enough-pass-9", "role": "viewer"}, "username"),
            ({"username": "OPERATOR", "password": "long-enough-pass-9", "role": "viewer"}, "username"),
            ({"username": "a b", "password": "long-enough-pass-9", "role": "viewer"}, "username"),
            ({"username": "new", "password": "short", "role": "viewer"}, "password"),
            ({"username": "new", "password": "long-enough-pass-9", "role": "root"}, "role"),
            (
                {"username": "new", "password": "long-enough-pass-9", "role": "viewer", "is_superuser": True},
                "is_superuser",
            ),
            ({"username": "new", "password": "long-enough-pass-9", "role": "viewer", "email": "nope"}, "email"),
        ]
        for body, field in cases:
            reply = admin.post("/api/v1/people/", body, format="json")
            assert reply.status_code == 400 and field in reply.json(), (body, reply.json())
        url = f"/api/v1/people/{self.outsider.pk}/"
        for body, field in (({"role": "god"}, "role"), ({"is_active": "perhaps"}, "is_active"), ({"x": 1}, "x")):
            reply = admin.patch(url, body, format="json")
            assert reply.status_code == 400 and field in reply.json()
        assert admin.patch("/api/v1/people/999999/", {"role": "viewer"}, format="json").status_code == 404
        assert User.objects.count() == before and not AuditEntry.objects.exists()

    def test_only_admins_manage_people(self) -> None:
        for user in (self.operator, self.outsider):
            client = self.user_client(user)
            assert client.get("/api/v1/people/").status_code == 403
            assert client.patch(f"/api/v1/people/{user.pk}/", {"role": "admin"}, format="json").status_code == 403
        self.operator.refresh_from_db()
        assert not self.operator.is_superuser


class OwnPasswordTests(FathomTestCase):
    def test_a_person_changes_their_own_password_and_stays_signed_in(self) -> None:
        client = self.user_client(self.outsider)
        body = {"current_password": "outsider-pass-1234", "new_password": "a-new-long-pass-5"}
        assert client.post("/api/v1/auth/password/", body, format="json").status_code == 204
        assert client.get("/api/v1/auth/me/").status_code == 200
        self.outsider.refresh_from_db()
        assert self.outsider.check_password("a-new-long-pass-5")
        entry = AuditEntry.objects.get(object_type="person")
        assert entry.changes == {"password_changed": [None, True]} and entry.actor_name == "outsider"

    @override_settings(LOGIN_FAILURES_PER_USERNAME="3/day")
    def test_guessing_the_current_password_is_throttled_without_locking_the_sign_in(self) -> None:
        """Issue 34 item 8: a stolen session could guess the current password without limit.
        A person of its own: the counters live in Redis and outlive the test (a day's window,
        so no boundary falls inside it but midnight's)."""
        name = f"guessed-{uuid.uuid4().hex[:8]}"
        User.objects.create_user(name, password="their-pass-1234")
        client = APIClient()
        assert client.login(username=name, password="their-pass-1234")
        wrong = {"current_password": "guess", "new_password": "a-new-long-pass-5"}
        missing = {"new_password": "a-new-long-pass-5"}  # no guess: does not count
        assert client.post("/api/v1/auth/password/", missing, format="json").status_code == 400
        for _ in range(3):
            assert client.post("/api/v1/auth/password/", wrong, format="json").status_code == 400
        right = {"current_password": "their-pass-1234", "new_password": "a-new-long-pass-5"}
        held = client.post("/api/v1/auth/password/", right, format="json")
        assert held.status_code == 429 and int(held["Retry-After"]) > 0, held.json()
        assert User.objects.get(username=name).check_password("their-pass-1234")
        signed_in = APIClient().post(
            "/api/v1/auth/login/", {"username": name, "password": "their-pass-1234"}, format="json"
        )
        assert signed_in.status_code == 200, "the guesses do not lock the person's sign-in"

    def test_wrong_current_password_weak_new_one_and_tokens_are_refused(self) -> None:
        client = self.user_client(self.outsider)
        for body, field in (
            ({"current_password": "nope", "new_password": "a-new-long-pass-5"}, "current_password"),
            ({"current_password": "outsider-pass-1234", "new_password": "123"}, "new_password"),
            ({"current_password": "outsider-pass-1234"}, "new_password"),
            ({"current_password": "outsider-pass-1234", "new_password": "a-new-long-pass-5", "x": 1}, "x"),
        ):
            reply = client.post("/api/v1/auth/password/", body, format="json")
            assert reply.status_code == 400 and field in reply.json(), (body, reply.json())
        token = create_api_token(self.outsider, "t", TokenScope.WRITE, None).plaintext
        scripted = APIClient()
        scripted.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        body = {"current_password": "outsider-pass-1234", "new_password": "a-new-long-pass-5"}
        assert scripted.post("/api/v1/auth/password/", body, format="json").status_code in (401, 403)
        self.outsider.refresh_from_db()
        assert self.outsider.check_password("outsider-pass-1234") and not AuditEntry.objects.exists()
