"""Reading pSConfig templates: the published schema, strict JSON, size and network bounds,
template variables, and what makes a whole template unimportable."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from django.test import override_settings

from perfsonar.psconfig.importer import plan_import
from perfsonar.psconfig.template import (
    TemplateError,
    check_template,
    load_file,
    load_url,
    parse_template,
    parse_variable,
    sole_variable,
)

FIXTURES = Path(__file__).parent / "fixtures" / "psconfig"
SAMPLES = sorted(path for path in FIXTURES.glob("psconfig-*.json") if "auth-token" not in path.name)


def minimal() -> dict[str, Any]:
    return {
        "addresses": {"a": {"address": "198.51.100.1"}, "b": {"address": "198.51.100.2"}},
        "groups": {"g": {"type": "mesh", "addresses": [{"name": "a"}, {"name": "b"}]}},
        "tests": {"t": {"type": "rtt", "spec": {"source": "{% address[0] %}", "dest": "{% address[1] %}"}}},
        "tasks": {"x": {"group": "g", "test": "t"}},
    }


@pytest.mark.parametrize("path", SAMPLES, ids=lambda path: path.name)
def test_every_sample_follows_the_published_schema(path: Path) -> None:
    assert load_file(path)["addresses"]


def test_not_json_is_refused_with_where_it_broke(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"addresses": {')
    with pytest.raises(TemplateError, match=r"broken\.json is not JSON"):
        load_file(broken)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"addresses": NaN}', "NaN is not JSON"),
        ('{"a": "x\\u0000"}', "NUL"),
        ("[" * 100 + "]" * 100, "nested deeper"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_json_the_api_would_refuse_is_refused(text: str, why: str) -> None:
    with pytest.raises(TemplateError, match=why):
        parse_template(text.encode(), "upload")


def test_an_unknown_top_level_key_names_the_key() -> None:
    template = minimal() | {"colour": "blue"}
    with pytest.raises(TemplateError, match="published schema") as caught:
        check_template(template)
    assert any("'colour' was unexpected" in error for error in caught.value.errors)


def test_an_unknown_key_deep_inside_says_where() -> None:
    template = minimal()
    template["groups"]["g"]["members"] = []
    with pytest.raises(TemplateError) as caught:
        check_template(template)
    assert any(error.startswith("groups.g") and "'members'" in error for error in caught.value.errors)


def test_a_missing_required_section_is_named() -> None:
    template = minimal()
    del template["tasks"]
    with pytest.raises(TemplateError, match="'tasks' is a required property"):
        check_template(template)


@override_settings(PERFSONAR_MAX_BODY_BYTES=65536)
def test_a_huge_file_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps(minimal() | {"_meta": {"padding": "x" * 70000}}))
    with pytest.raises(TemplateError, match="larger than 65536 bytes"):
        load_file(huge)


def test_a_missing_file_is_a_template_error(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="cannot read"):
        load_file(tmp_path / "absent.json")


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_url_that_is_down_is_a_clear_error() -> None:
    with pytest.raises(TemplateError, match=r"cannot fetch http://127\.0\.0\.1:\d+/mesh\.json"):
        load_url(f"http://127.0.0.1:{closed_port()}/mesh.json")


def test_only_http_urls_are_fetched() -> None:
    with pytest.raises(TemplateError, match="not an http"):
        load_url("file:///etc/passwd")


class _Templates(BaseHTTPRequestHandler):
    bodies: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:
        body = self.bodies.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def template_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Templates)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Templates.bodies = {
        "/ok.json": json.dumps(minimal()).encode(),
        "/huge.json": json.dumps(minimal() | {"_meta": "x" * 70000}).encode(),
    }
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_template_is_fetched_from_a_url(template_server: str) -> None:
    assert load_url(f"{template_server}/ok.json") == minimal()


def test_a_url_answering_an_error_is_refused(template_server: str) -> None:
    with pytest.raises(TemplateError, match="answered HTTP 404"):
        load_url(f"{template_server}/absent.json")


@override_settings(PERFSONAR_MAX_BODY_BYTES=65536)
def test_a_huge_download_is_cut_off(template_server: str) -> None:
    with pytest.raises(TemplateError, match="larger than 65536 bytes"):
        load_url(f"{template_server}/huge.json")


def test_variables_are_told_apart() -> None:
    assert sole_variable("{% address[1] %}") == parse_variable("address[1]")
    assert parse_variable("address[1]").pair_end == 1
    assert parse_variable("pscheduler_address[0]").pair_end == 0
    assert parse_variable("lead_bind_address[0]").pair_end is None
    assert parse_variable("jq .addresses[0]._meta.x").kind == "jq"
    assert parse_variable("scheduled_by_address").known
    assert not parse_variable("address").known
    assert sole_variable("{% address[0] %}:5201") is None


def test_an_unknown_template_variable_stops_the_import() -> None:
    template = minimal()
    template["tests"]["t"]["spec"]["dest"] = "{% far_end %}"
    with pytest.raises(
        TemplateError, match=r"tests\.t\.spec\.dest: \{% far_end %\} is not a pSConfig template variable"
    ):
        plan_import(template, [])


def test_a_group_naming_a_missing_address_stops_the_import() -> None:
    template = minimal()
    template["groups"]["g"]["addresses"].append({"name": "c"})
    with pytest.raises(TemplateError, match=r"groups\.g\.addresses\[2\]: names address c"):
        plan_import(template, [])


def test_names_outside_psconfig_pattern_stop_the_import() -> None:
    # The schema's patternProperties let such names through unchecked.
    template = minimal()
    template["schedules"] = {"every hour": {"repeat": "PT1H"}}
    with pytest.raises(TemplateError, match="'every hour' is not a pSConfig name"):
        plan_import(template, [])
