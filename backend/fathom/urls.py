"""URL routing: the API under /api/v1/, the admin, and the UI for everything else."""

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path

from fathom import spa
from fathom.body_check import body_check
from fathom.schema import SchemaView
from perfsonar.api.psconfig import PublishedPsconfigView

api_v1: list[URLPattern | URLResolver] = [
    path("", include("core.api.urls")),
    path("", include("accounts.api.urls")),
    path("", include("audit.api.urls")),
    path("", include("inventory.api.urls")),
    path("", include("meshes.api.urls")),
    path("", include("measurements.api.urls")),
    path("", include("history.api.urls")),
    path("", include("perfsonar.api.urls")),
    path("", include("analysis.api.urls")),
    path("", include("alerts.api.urls")),
    path("schema/", SchemaView.as_view(), name="schema"),
]

urlpatterns = [
    # The proxy's check before it holds a body (deploy/Caddyfile), outside the API's schema.
    path("api/v1/auth/body-check/", body_check, name="body-check"),
    path("api/v1/", include(api_v1)),
    path("admin/", admin.site.urls),
    # Prometheus's default metrics_path (metrics/api/views.py says who may scrape).
    path("", include("metrics.api.urls")),
    # A mesh an operator published as a pSConfig template, for perfSONAR nodes to subscribe to.
    re_path(r"^psconfig/(?P<mesh>[-a-zA-Z0-9_]+)\.json$", PublishedPsconfigView.as_view(), name="psconfig-published"),
    # Everything else is a UI route (/, /login, /agents, /paths/<src>/<dst>, ...).
    re_path(r"^(?!api/|admin/|static/|metrics$).*$", spa.index, name="ui"),
]
