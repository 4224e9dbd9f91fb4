from django.urls import path

from core.api import views

urlpatterns = [
    path("choices/", views.ChoicesView.as_view(), name="choices"),
]
