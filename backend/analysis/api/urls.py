from django.urls import path

from analysis.api import views

urlpatterns = [
    path("analysis/path/", views.PathAnalysisView.as_view(), name="analysis-path"),
    path("analysis/path/timeline/", views.PathTimelineView.as_view(), name="analysis-path-timeline"),
    path("analysis/paths/", views.PathListView.as_view(), name="analysis-paths"),
    path("analysis/paths/spark/", views.PathSparkView.as_view(), name="analysis-path-sparks"),
    path("analysis/meshes/<str:name>/grid/", views.MeshGridView.as_view(), name="analysis-mesh-grid"),
    path("analysis/findings/", views.FindingListView.as_view(), name="analysis-findings"),
    path("analysis/findings/<int:pk>/changes/", views.FindingChangesView.as_view(), name="analysis-finding-changes"),
]
