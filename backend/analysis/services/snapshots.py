"""The grid as it is served: its JSON body, computed once a minute per mesh and kept in the
cache (Redis), so a request reads bytes instead of computing 9,900 cells.

At 100 agents one grid costs about a second of server time (four queries, the per-cell loop,
5 MB of JSON), and a NOC wall display plus several browsers, each refreshing every minute,
would pay it on every request. Beat refreshes every enabled mesh's grid each minute
(analysis.tasks.refresh_snapshots), as does a manual `manage.py analyze`; a request that finds
none (a disabled mesh, beat not running) computes it then. The key holds the mesh's
updated_at, so an edit (thresholds, members, tests) is served at once rather than after the
next refresh. The body carries its generated_at, which the page shows: ages and staleness
are as of then, at most a minute old, while what the grid reads is itself minutes-settled
(history.last_hour).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.renderers import JSONRenderer

from analysis.services import shaping
from analysis.services.grid import mesh_grid
from meshes.models import Mesh


def grid_key(mesh: Mesh) -> str:
    return f"analysis:grid:{mesh.pk}:{mesh.updated_at.isoformat()}"


def _store(key: str, document: Callable[[], dict[str, Any]]) -> bytes:
    body: bytes = JSONRenderer().render(document())
    if settings.SNAPSHOT_TTL_S > 0:
        cache.set(key, body, timeout=settings.SNAPSHOT_TTL_S)
    return body


def _stored_or(key: str, document: Callable[[], dict[str, Any]]) -> bytes:
    body = cache.get(key) if settings.SNAPSHOT_TTL_S > 0 else None
    return body if isinstance(body, bytes) else _store(key, document)


def compute_grid_body(mesh: Mesh) -> bytes:
    """The grid's response body now, stored as the mesh's snapshot."""
    return _store(grid_key(mesh), lambda: shaping.mesh_grid(mesh_grid(mesh)))


def grid_body(mesh: Mesh) -> bytes:
    """The mesh's grid snapshot, or a new one when there is none for this version of the mesh."""
    return _stored_or(grid_key(mesh), lambda: shaping.mesh_grid(mesh_grid(mesh)))


def refresh_snapshots() -> int:
    """Recomputes the grid of every enabled mesh; returns how many."""
    meshes = list(Mesh.objects.filter(enabled=True).prefetch_related("members", "tests"))
    for mesh in meshes:
        compute_grid_body(mesh)
    return len(meshes)
