from django.urls import path

from history.api import views

urlpatterns = [
    path("paths/history/", views.PathHistoryView.as_view(), name="path-history"),
]
