from django.urls import path
from rest_framework.routers import SimpleRouter

from meshes.api import views

router = SimpleRouter()
router.register("meshes", views.MeshViewSet, basename="mesh")

urlpatterns = [
    path("agent/plan/", views.PlanView.as_view(), name="agent-plan"),
    path("slots/", views.SlotListView.as_view(), name="slot-list"),
    path("slots/utilization/", views.UtilizationView.as_view(), name="slot-utilization"),
    *router.urls,
]
