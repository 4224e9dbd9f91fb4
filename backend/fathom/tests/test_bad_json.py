"""Across the API (core's parser, the contract, ingest, enrolment): bodies that once gave
HTTP 500 are a 400 with a reason, and store nothing: nesting deep enough to exhaust the
decoder, NUL characters, NaN, and dates that are no moment."""

from __future__ import annotations

import copy
import json

from rest_framework.test import APIClient

from core.strict_json import MAX_DEPTH
from fathom.testing import FathomTestCase, load_example
from measurements.models import PingSample, Run

RESULTS_URL = "/api/v1/agent/results/"
ENROLL_URL = "/api/v1/agents/enroll/"


class BadJsonTests(FathomTestCase):
    def post_results(self, body: bytes) -> tuple[int, str]:
        client = self.agent_client(self.athens, self.athens_credential)
        reply = client.post(RESULTS_URL, body, content_type="application/json")
        return reply.status_code, json.dumps(reply.json())

    def batch(self) -> dict[str, object]:
        batch: dict[str, object] = load_example("valid/ping-ok.json")
        return batch

    def assert_nothing_stored(self) -> None:
        assert Run.objects.count() == 0 and PingSample.objects.count() == 0

    def test_deep_nesting_is_refused_even_anonymously(self) -> None:
        deep = b"[" * 100_000 + b"]" * 100_000
        for url in (ENROLL_URL, RESULTS_URL):
            client = APIClient() if url == ENROLL_URL else self.agent_client(self.athens, self.athens_credential)
            reply = client.post(url, deep, content_type="application/json")
            assert reply.status_code == 400, (url, reply.status_code)
            assert "nested deeper than" in json.dumps(reply.json())
        nested: object = "leaf"
        for _ in range(MAX_DEPTH + 1):
            nested = {"k": nested}
        status, text = self.post_results(json.dumps(nested).encode())
        assert status == 400 and "nested deeper than" in text
        self.assert_nothing_stored()

    def test_nul_characters_are_refused(self) -> None:
        batch = self.batch()
        results = copy.deepcopy(batch["results"])
        assert isinstance(results, list)
        results[0]["error"] = "bad\u0000byte"
        status, text = self.post_results(json.dumps({**batch, "results": results}).encode())
        assert status == 400 and "NUL" in text
        status, text = self.post_results(json.dumps({**batch, "x\u0000": 1}).encode())
        assert status == 400 and "NUL" in text
        reply = APIClient().post(
            ENROLL_URL, {"token": "t", "name": "a\u0000b", "address": "198.18.0.9", "version": "1"}, format="json"
        )
        assert reply.status_code == 400
        self.assert_nothing_stored()

    def test_nan_and_infinity_are_not_json(self) -> None:
        text = json.dumps(self.batch()).replace('"rtt_ms": 7.81', '"rtt_ms": NaN')
        assert "NaN" in text
        status, body = self.post_results(text.encode())
        assert status == 400 and "NaN is not JSON" in body
        status, body = self.post_results(text.replace("NaN", "-Infinity").encode())
        assert status == 400 and "-Infinity is not JSON" in body
        self.assert_nothing_stored()

    def test_a_date_that_is_no_moment_is_a_400(self) -> None:
        for bad in ("2026-13-45T99:00:00Z", "2026-02-30T10:00:00Z", "yesterday", "2026-11-22 10:00:00Z"):
            batch = self.batch()
            results = copy.deepcopy(batch["results"])
            assert isinstance(results, list)
            results[0]["started_at"] = bad
            status, text = self.post_results(json.dumps({**batch, "results": results}).encode())
            assert status == 400, (bad, status, text)
            assert "started_at" in text, text
        self.assert_nothing_stored()

    def test_a_valid_batch_still_lands(self) -> None:
        status, _ = self.post_results(json.dumps(self.batch()).encode())
        assert status == 200 and Run.objects.count() == 1
