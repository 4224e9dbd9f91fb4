from django.urls import path, re_path

from perfsonar.api import psconfig, views

urlpatterns = [
    path("perfsonar/nodes/", views.NodeListView.as_view(), name="perfsonar-nodes"),
    path("perfsonar/nodes/<str:name>/", views.NodeDetailView.as_view(), name="perfsonar-node"),
    path("perfsonar/nodes/<str:name>/check/", views.NodeCheckView.as_view(), name="perfsonar-node-check"),
    path("perfsonar/nodes/<str:name>/tasks/", views.NodeTasksView.as_view(), name="perfsonar-node-tasks"),
    path("perfsonar/nodes/<str:name>/archive-token/", views.ArchiveTokenView.as_view(), name="perfsonar-node-token"),
    path("perfsonar/archive/", views.ArchiveView.as_view(), name="perfsonar-archive"),
    path("perfsonar/psconfig/import/", psconfig.PsconfigImportView.as_view(), name="psconfig-import"),
    re_path(
        r"^perfsonar/psconfig/(?P<mesh>[-a-zA-Z0-9_]+)\.json$",
        psconfig.PsconfigMeshView.as_view(),
        name="psconfig-mesh",
    ),
]
