from django.urls import path

from meshes.api import views

urlpatterns = [
    path("agent/plan/", views.PlanView.as_view(), name="agent-plan"),
]
