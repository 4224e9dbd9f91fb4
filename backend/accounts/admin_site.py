"""The Django admin with its sign-in held to the same failed-login limits as the API's."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest, HttpResponse

from accounts.login_guard import LoginGuard, throttled_message


class FathomAdminSite(admin.AdminSite):
    site_header = "Fathom administration"
    site_title = "Fathom admin"

    def login(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if request.method != "POST":
            return super().login(request, extra_context)
        guard = LoginGuard.of(request, str(request.POST.get("username", "")))
        wait_s = guard.begin()
        if wait_s:
            response = HttpResponse(throttled_message(wait_s), status=429, content_type="text/plain; charset=utf-8")
            response["Retry-After"] = str(wait_s)
            return response
        response = super().login(request, extra_context)
        # A sign-in that worked redirects; a failed one shows the form again.
        if response.status_code == 200:
            guard.failed()
        else:
            guard.succeeded()
        return response


class FathomAdminConfig(AdminConfig):
    """The admin app (in INSTALLED_APPS in place of django.contrib.admin) on FathomAdminSite."""

    default_site = "accounts.admin_site.FathomAdminSite"
