from django.urls import path

from audit.api import views

urlpatterns = [path("audit/", views.AuditLogView.as_view(), name="audit-log")]
