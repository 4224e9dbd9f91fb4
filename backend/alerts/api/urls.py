from django.urls import path
from rest_framework.routers import SimpleRouter

from alerts.api import views

router = SimpleRouter()
router.register("alerts/incidents", views.IncidentViewSet, basename="incident")
router.register("alerts/rules", views.RuleViewSet, basename="alert-rule")
router.register("alerts/silences", views.SilenceViewSet, basename="silence")
router.register("alerts/channels", views.ChannelViewSet, basename="channel")

urlpatterns = [
    path("alerts/summary/", views.SummaryView.as_view(), name="alert-summary"),
    *router.urls,
]
