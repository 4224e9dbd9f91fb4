"""pSConfig over HTTP: import by operators (a body or a URL, dry run, clear 400s with nothing
written), a mesh as a template for the signed in, and published meshes for anyone."""

from __future__ import annotations

import socket
from typing import Any, ClassVar

from django.test import override_settings
from django.urls import path, re_path

from audit.services import Actor
from fathom.testing import FathomTestCase
from meshes.documents import MeshSerializer
from meshes.models import Mesh
from meshes.services.writes import save_mesh
from perfsonar.api import psconfig
from perfsonar.psconfig.template import check_template

# The routes as fathom/urls.py and perfsonar/api/urls.py give them.
urlpatterns = [
    path("api/v1/perfsonar/psconfig/import/", psconfig.PsconfigImportView.as_view(), name="psconfig-import"),
    re_path(
        r"^api/v1/perfsonar/psconfig/(?P<mesh>[-a-zA-Z0-9_]+)\.json$",
        psconfig.PsconfigMeshView.as_view(),
        name="psconfig-mesh",
    ),
    re_path(
        r"^psconfig/(?P<mesh>[-a-zA-Z0-9_]+)\.json$",
        psconfig.PublishedPsconfigView.as_view(),
        name="psconfig-published",
    ),
]
IMPORT = "/api/v1/perfsonar/psconfig/import/"


def template() -> dict[str, Any]:
    return {
        "addresses": {"a": {"address": "198.18.1.1"}, "b": {"address": "198.18.2.1"}},
        "groups": {"pair": {"type": "mesh", "addresses": [{"name": "a"}, {"name": "b"}]}},
        "tests": {"rtt": {"type": "rtt", "spec": {"dest": "{% address[1] %}", "count": 10}}},
        "schedules": {"5m": {"repeat": "PT5M"}},
        "tasks": {"ping": {"group": "pair", "test": "rtt", "schedule": "5m"}},
    }


@override_settings(ROOT_URLCONF=__name__)
class PsconfigApiTests(FathomTestCase):
    published: ClassVar[Mesh]
    private: ClassVar[Mesh]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        for name, published in (("shared", True), ("private", False)):
            serializer = MeshSerializer(
                data={
                    "name": name,
                    "psconfig_published": published,
                    "members": [{"agent": "athens"}, {"agent": "frankfurt"}],
                    "tests": [{"name": "ping", "test_type": "ping", "spec": {}, "interval_s": 300}],
                }
            )
            serializer.is_valid(raise_exception=True)
            save_mesh(serializer, Actor.command("test"))

    def test_an_operator_imports_a_template(self) -> None:
        response = self.user_client(self.operator).post(IMPORT, {"template": template()}, format="json")
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["dry_run"] is False
        assert body["meshes"] == [
            {
                "name": "pair",
                "group": "pair",
                "action": "create",
                "kind": "mesh",
                "members": ["athens", "frankfurt"],
                "targets": [],
                "tests": [{"name": "ping", "test_type": "ping", "interval_s": 300, "slip_s": 0, "enabled": True}],
            }
        ]
        assert [node["action"] for node in body["nodes"]] == ["matched", "matched"]
        assert Mesh.objects.filter(name="pair").exists()

    def test_a_dry_run_writes_nothing(self) -> None:
        response = self.user_client(self.operator).post(
            IMPORT, {"template": template(), "dry_run": True}, format="json"
        )
        assert response.status_code == 200 and response.json()["meshes"][0]["action"] == "create"
        assert not Mesh.objects.filter(name="pair").exists()

    def test_a_viewer_may_not_import(self) -> None:
        response = self.user_client(self.outsider).post(IMPORT, {"template": template()}, format="json")
        assert response.status_code == 403
        assert self.client.post(IMPORT, {"template": template()}, format="json").status_code == 403

    def test_bad_templates_are_400_with_the_reasons_and_nothing_written(self) -> None:
        client = self.user_client(self.operator)
        unknown_key = template() | {"colour": "blue"}
        unknown_variable = template()
        unknown_variable["tests"]["rtt"]["spec"]["dest"] = "{% peer %}"
        missing_address = template()
        missing_address["groups"]["pair"]["addresses"].append({"name": "c"})
        cases = [
            (unknown_key, "'colour' was unexpected"),
            (unknown_variable, "{% peer %} is not a pSConfig template variable"),
            (missing_address, "names address c, which the template does not define"),
            ("not an object", "must be a JSON object"),
        ]
        for body, why in cases:
            with self.subTest(why=why):
                response = client.post(IMPORT, {"template": body}, format="json")
                assert response.status_code == 400
                assert any(why in reason for reason in response.json()["template"])
        assert not Mesh.objects.filter(name="pair").exists()

    def test_a_body_that_is_not_json_is_400(self) -> None:
        response = self.user_client(self.operator).post(IMPORT, "{not json", content_type="application/json")
        assert response.status_code == 400

    def test_a_url_that_is_down_is_400(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        url = f"http://127.0.0.1:{port}/mesh.json"
        response = self.user_client(self.operator).post(IMPORT, {"url": url}, format="json")
        assert response.status_code == 400
        assert response.json()["url"][0].startswith(f"cannot fetch {url}")

    def test_the_template_or_its_url_one_of_the_two(self) -> None:
        client = self.user_client(self.operator)
        for body in ({}, {"template": template(), "url": "https://example.net/t.json"}):
            assert client.post(IMPORT, body, format="json").status_code == 400
        assert client.post(IMPORT, {"template": template(), "force": True}, format="json").status_code == 400

    def test_a_mesh_as_a_template_for_the_signed_in(self) -> None:
        url = "/api/v1/perfsonar/psconfig/private.json"
        response = self.user_client(self.outsider).get(url)
        assert response.status_code == 200
        assert check_template(response.json())["groups"]["private"]["type"] == "mesh"
        assert response["Content-Disposition"] == 'inline; filename="private.json"'
        assert self.client.get(url).status_code == 403
        assert self.user_client(self.outsider).get("/api/v1/perfsonar/psconfig/absent.json").status_code == 404

    def test_published_meshes_are_public_and_others_are_not_there(self) -> None:
        response = self.client.get("/psconfig/shared.json")
        assert response.status_code == 200
        assert check_template(response.json())["tasks"]["ping"]["reference"]["fathom"] == {
            "mesh": "shared",
            "test": "ping",
        }
        assert self.client.get("/psconfig/private.json").status_code == 404
        assert self.client.get("/psconfig/absent.json").status_code == 404
