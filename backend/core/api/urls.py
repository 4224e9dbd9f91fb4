from django.urls import path

from core.api import views
from core.api.health import HealthView

urlpatterns = [
    path("choices/", views.ChoicesView.as_view(), name="choices"),
    path("health/", HealthView.as_view(), name="health"),
]
