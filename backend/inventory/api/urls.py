from django.urls import path
from rest_framework.routers import SimpleRouter

from inventory.api import views

router = SimpleRouter()
router.register("enrollment-tokens", views.EnrollmentTokenViewSet, basename="enrollment-token")
router.register("agents", views.AgentViewSet, basename="agent")

urlpatterns = [
    path("agents/enroll/", views.EnrollView.as_view(), name="agent-enroll"),
    path("agent/host-facts/", views.HostFactsView.as_view(), name="agent-host-facts"),
    *router.urls,
]
