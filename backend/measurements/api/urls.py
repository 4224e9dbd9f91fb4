from django.urls import path

from measurements.api import target_views, views

urlpatterns = [
    path("agent/results/", views.ResultsView.as_view(), name="agent-results"),
    path("paths/", views.PathListView.as_view(), name="path-list"),
    path("paths/rtt/", views.PathRttView.as_view(), name="path-rtt"),
    path("paths/latency/", views.PathLatencyView.as_view(), name="path-latency"),
    path("paths/runs/", views.PathRunsView.as_view(), name="path-runs"),
    path("paths/routes/", views.PathRoutesView.as_view(), name="path-routes"),
    path("targets/", target_views.TargetListView.as_view(), name="target-list"),
    path("targets/rtt/", target_views.TargetRttView.as_view(), name="target-rtt"),
    path("targets/latency/", target_views.TargetLatencyView.as_view(), name="target-latency"),
    path("targets/runs/", target_views.TargetRunsView.as_view(), name="target-runs"),
    path("targets/routes/", target_views.TargetRoutesView.as_view(), name="target-routes"),
]
