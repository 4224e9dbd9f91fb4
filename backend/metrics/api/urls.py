from django.urls import path

from metrics.api import views

urlpatterns = [
    path("metrics", views.MetricsView.as_view(), name="metrics"),
]
