"""Upgrades that lose nothing (issue 33 item 5).

A database is made the way the previous release made it: that release's backend, taken from
git at the commit deploy/releases.txt records for it, migrates an empty database and fills it
with its own `seed_release_data` (every kind of result ingested as agents upload it, host
facts, rollups, analyses). The current code then migrates it, and every table, every row id
and every count the previous release left is still there, and the path's API answers with its
runs, history and analysis.

Needs the release's commit in the checkout (git history); a checkout without it skips, saying
so. The release procedure that keeps deploy/releases.txt true is in docs/operations.md.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from .conftest import ROOT, services_env, with_database

RELEASES = ROOT / "deploy" / "releases.txt"
DATABASE = "fathom_upgrade_test"
PYTHON = ROOT / "var" / "venv" / "bin" / "python"
# The previous release's data is the contract examples' day (seed_release_data).
RANGE = {"from": "2026-11-21T12:00:00Z", "to": "2026-11-22T12:30:00Z"}
SNAPSHOT_SQL = """
SELECT c.relname, EXISTS (
  SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'id' AND NOT a.attisdropped)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1
"""
# What the current code answers for the seeded path, through Django's test client.
API_CHECK = """
import json, os
from django.contrib.auth.models import User
from django.test import Client
from inventory.models import Agent
span = json.loads(os.environ["UPGRADE_RANGE"])
client = Client(HTTP_HOST="localhost")
client.force_login(User.objects.get(username="release-owner"))
a, b = Agent.objects.get(name="release-a"), Agent.objects.get(name="release-b")
pair = {"source": str(a.pk), "destination": str(b.pk)}
window = dict(pair, start=span["from"], end=span["to"])
asked = {
    "paths/runs/": dict(pair, limit=100),
    "paths/rtt/": window,
    "paths/latency/": window,
    "paths/history/": dict(pair, **span),
    "analysis/path/": pair,
    "analysis/path/timeline/": dict(pair, **span),
    "analysis/findings/": {},
}
answers = {}
for endpoint, params in asked.items():
    reply = client.get("/api/v1/" + endpoint, params)
    answers[endpoint] = {"status": reply.status_code, "body": reply.json() if reply.status_code == 200 else None}
print(json.dumps(answers))
"""


@dataclass(frozen=True)
class Snapshot:
    counts: dict[str, int]
    ids: dict[str, set[str]]


def previous_release() -> tuple[str, str]:
    entries = [line.split() for line in RELEASES.read_text().splitlines() if line.strip() and not line.startswith("#")]
    version, commit = entries[-1][:2]
    return version, commit


def snapshot(url: str) -> Snapshot:
    counts: dict[str, int] = {}
    ids: dict[str, set[str]] = {}
    with psycopg.connect(url) as conn:
        for table, has_id in conn.execute(SNAPSHOT_SQL).fetchall():
            name = sql.Identifier(table)
            counts[table] = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(name)).fetchone()[0]  # type: ignore[index]
            if has_id:
                ids[table] = {str(row[0]) for row in conn.execute(sql.SQL("SELECT id FROM {}").format(name))}
    return Snapshot(counts, ids)


def manage(backend: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [str(PYTHON), "manage.py", *args], cwd=backend, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{backend}: manage.py {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


@dataclass(frozen=True)
class Upgrade:
    version: str
    seeded: dict[str, Any]
    before: Snapshot
    after: Snapshot
    answers: dict[str, Any]


@pytest.fixture(scope="module")
def upgrade(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upgrade]:
    version, commit = previous_release()
    present = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True)
    if present.returncode != 0:
        pytest.skip(f"this checkout lacks {version}'s commit {commit[:12]} (no git history): nothing to upgrade from")
    old = tmp_path_factory.mktemp("previous-release")
    archive = subprocess.run(
        ["git", "archive", commit, "backend", "contract"], cwd=ROOT, capture_output=True, check=True
    )
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(old, filter="data")
    base = services_env()
    url = with_database(base["FATHOM_DATABASE_URL"], DATABASE)
    admin = with_database(base["FATHOM_DATABASE_URL"], "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")
    env = {
        **os.environ,
        **base,
        "FATHOM_DATABASE_URL": url,
        "FATHOM_SECRET_KEY": secrets.token_urlsafe(48),
        "FATHOM_DEBUG": "0",
        "FATHOM_ALLOWED_HOSTS": "localhost",
        "PYTHONDONTWRITEBYTECODE": "1",
        "UPGRADE_RANGE": json.dumps(RANGE),
    }
    try:
        manage(old / "backend", env, "migrate", "--no-input")
        seeded = json.loads(manage(old / "backend", env, "seed_release_data", "--json").splitlines()[-1])
        before = snapshot(url)
        manage(ROOT / "backend", env, "migrate", "--no-input")
        after = snapshot(url)
        answers = json.loads(manage(ROOT / "backend", env, "shell", "-c", API_CHECK).splitlines()[-1])
        yield Upgrade(version, seeded, before, after, answers)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def test_the_previous_release_made_data_of_every_kind(upgrade: Upgrade) -> None:
    results = upgrade.seeded["results"]
    assert results and all(count >= 1 for count in results.values()), results
    assert upgrade.before.counts["measurements_run"] >= sum(results.values())
    print(f"{upgrade.version}: {sum(upgrade.before.counts.values())} rows in {len(upgrade.before.counts)} tables")


def test_every_table_row_and_count_survives_the_upgrade(upgrade: Upgrade) -> None:
    before, after = upgrade.before, upgrade.after
    assert set(before.counts) <= set(after.counts), f"tables gone: {sorted(set(before.counts) - set(after.counts))}"
    shrunk = {table: (n, after.counts[table]) for table, n in before.counts.items() if after.counts[table] < n}
    assert not shrunk, f"rows lost (before, after): {shrunk}"
    lost = {table: sorted(ids - after.ids.get(table, set()))[:5] for table, ids in before.ids.items()}
    assert not {table: gone for table, gone in lost.items() if gone}, lost
    print(f"upgrade: {len(before.counts)} tables, {sum(before.counts.values())} rows kept")


def test_the_path_answers_after_the_upgrade(upgrade: Upgrade) -> None:
    answers = upgrade.answers
    assert {endpoint: answer["status"] for endpoint, answer in answers.items()} == dict.fromkeys(answers, 200)
    assert len(answers["paths/runs/"]["body"]) >= 4
    history = answers["paths/history/"]["body"]
    assert history["rtt"] and history["throughput"], history
    assert answers["paths/latency/"]["body"]["points"]
    assert answers["analysis/path/"]["body"]["runs"], answers["analysis/path/"]["body"]
