from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from django.test import override_settings
from rest_framework.test import APIClient

from fathom.testing import FathomTestCase


class LoginTests(FathomTestCase):
    def test_login_me_logout_with_csrf(self) -> None:
        client = APIClient(enforce_csrf_checks=True)
        csrf = client.get("/api/v1/auth/csrf/").json()["csrf_token"]
        without = client.post("/api/v1/auth/login/", {"username": "operator", "password": "x"}, format="json")
        assert without.status_code == 403  # no CSRF header
        reply = client.post(
            "/api/v1/auth/login/",
            {"username": "operator", "password": "operator-pass-1234"},
            format="json",
            HTTP_X_CSRFTOKEN=csrf,
        )
        assert reply.status_code == 200
        assert reply.json() == {"username": "operator", "email": "", "is_staff": True, "role": "operator"}
        assert client.get("/api/v1/auth/me/").json()["username"] == "operator"
        token = client.cookies["csrftoken"].value  # rotated at login
        assert client.post("/api/v1/auth/logout/", HTTP_X_CSRFTOKEN=token).status_code == 204
        assert client.get("/api/v1/auth/me/").status_code == 403

    def test_wrong_password_and_malformed_login(self) -> None:
        reply = self.client.post("/api/v1/auth/login/", {"username": "operator", "password": "nope"}, format="json")
        assert reply.status_code == 400 and reply.json() == {"detail": "invalid username or password"}
        assert self.client.post("/api/v1/auth/login/", {"username": "operator"}, format="json").status_code == 400
        assert self.client.get("/api/v1/auth/me/").status_code == 403

    def test_unsafe_user_requests_need_csrf(self) -> None:
        client = self.user_client(self.operator, enforce_csrf=True)
        assert client.post("/api/v1/enrollment-tokens/", {}, format="json").status_code == 403

    def test_choices_carry_labels_and_colours(self) -> None:
        choices = self.user_client(self.outsider).get("/api/v1/choices/").json()
        statuses = {c["value"] for c in choices["agent_status"]}
        assert statuses == {"online", "offline", "never_seen", "revoked", "decommissioned"}
        assert all(c["label"] and c["color"].startswith("#") for group in choices.values() for c in group)


class SpaTests(FathomTestCase):
    def test_ui_routes_serve_the_built_index(self) -> None:
        with TemporaryDirectory() as tmp:
            (Path(tmp) / "index.html").write_text("<!doctype html><div id=root></div>")
            with override_settings(FRONTEND_DIST=Path(tmp)):
                for route in ("/", "/login", "/agents", "/paths/a/b"):
                    reply = self.client.get(route)
                    assert reply.status_code == 200 and b"id=root" in reply.content, route
                    assert reply["Cache-Control"] == "no-cache"

    def test_unbuilt_ui_says_what_to_do(self) -> None:
        with TemporaryDirectory() as tmp, override_settings(FRONTEND_DIST=Path(tmp)):
            reply = self.client.get("/paths")
            assert reply.status_code == 503 and b"make frontend" in reply.content

    def test_unknown_api_routes_are_not_the_ui(self) -> None:
        assert self.client.get("/api/v1/nope/").status_code == 404
        assert self.client.post("/").status_code == 405
