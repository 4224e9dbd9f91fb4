"""The proxy's check before it holds a large body (deploy/Caddyfile's forward_auth): 204 for
any valid credential, 401 for none or a made-up one, and never a body read."""

from __future__ import annotations

from accounts.choices import TokenScope
from accounts.services import create_api_token
from fathom.testing import FathomTestCase
from perfsonar.nodes import register_node
from perfsonar.tokens import authorization_header

CHECK = "/api/v1/auth/body-check/"


class BodyCheckTests(FathomTestCase):
    def status(self, **headers: str) -> int:
        return self.client.get(CHECK, headers=headers).status_code

    def test_a_valid_credential_of_each_kind_passes(self) -> None:
        assert self.status(Authorization=f"Agent {self.athens.pk}:{self.athens_credential}") == 204
        token = create_api_token(self.operator, "ci", TokenScope.WRITE, None)
        assert self.status(Authorization=f"Bearer {token.plaintext}") == 204
        node = register_node("ps-check", "https://198.18.9.7/pscheduler", "198.18.9.7")
        assert self.status(Authorization=authorization_header(node)) == 204
        self.client.force_login(self.outsider)  # a session, whatever its role
        assert self.status() == 204

    def test_none_or_a_made_up_one_is_refused(self) -> None:
        assert self.status() == 401
        for made_up in (
            f"Agent {self.athens.pk}:wrong",
            "Agent not-a-uuid:x",
            "Agent",
            "Bearer fpt_made_up",
            "Bearer fps_0.x",
            "Basic YWRtaW46YWRtaW4=",
        ):
            assert self.status(Authorization=made_up) == 401, made_up
        self.client.cookies["sessionid"] = "made-up"
        assert self.status() == 401

    def test_it_takes_no_body(self) -> None:
        assert self.client.post(CHECK, data="{}", content_type="application/json").status_code == 405
