from django.urls import path
from rest_framework.routers import SimpleRouter

from accounts.api import views

router = SimpleRouter()
router.register("people", views.PersonViewSet, basename="person")
router.register("api-tokens", views.ApiTokenViewSet, basename="api-token")

urlpatterns = [
    path("auth/csrf/", views.CsrfView.as_view(), name="auth-csrf"),
    path("auth/login/", views.LoginView.as_view(), name="auth-login"),
    path("auth/logout/", views.LogoutView.as_view(), name="auth-logout"),
    path("auth/me/", views.MeView.as_view(), name="auth-me"),
    path("auth/password/", views.PasswordView.as_view(), name="auth-password"),
    *router.urls,
]
