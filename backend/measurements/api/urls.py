from django.urls import path

from measurements.api import views

urlpatterns = [
    path("agent/results/", views.ResultsView.as_view(), name="agent-results"),
    path("paths/", views.PathListView.as_view(), name="path-list"),
    path("paths/rtt/", views.PathRttView.as_view(), name="path-rtt"),
    path("paths/runs/", views.PathRunsView.as_view(), name="path-runs"),
    path("paths/routes/", views.PathRoutesView.as_view(), name="path-routes"),
]
