from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate, login, logout
from django.middleware.csrf import get_token
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_protect, ensure_csrf_cookie
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.api.serializers import CsrfSerializer, LoginSerializer, UserSerializer
from accounts.login_guard import LoginGuard, throttled_message


@method_decorator(ensure_csrf_cookie, name="dispatch")
class CsrfView(APIView):
    """Sets the CSRF cookie that unsafe requests must echo in X-CSRFToken."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: CsrfSerializer}, auth=[])
    def get(self, request: Request) -> Response:
        return Response({"csrf_token": get_token(request._request)})


@method_decorator(csrf_protect, name="dispatch")
class LoginView(APIView):
    """Signs a user in. CSRF-protected although anonymous, against login CSRF; failed
    sign-ins are limited per client address and per username (accounts.login_guard)."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        request=LoginSerializer,
        responses={
            200: UserSerializer,
            400: OpenApiResponse(description="invalid username or password"),
            429: OpenApiResponse(description="too many failed sign-ins from this address or for this username"),
        },
        auth=[],
    )
    def post(self, request: Request) -> Response:
        params = LoginSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        username = params.validated_data["username"]
        guard = LoginGuard.of(request._request, username)
        wait_s = guard.retry_after_s()
        if wait_s:
            return Response(
                {"detail": throttled_message(wait_s)},
                status=status.HTTP_429_TOO_MANY_REQUESTS,
                headers={"Retry-After": str(wait_s)},
            )
        user = authenticate(request._request, username=username, password=params.validated_data["password"])
        if user is None:
            guard.record_failure()
            return Response({"detail": "invalid username or password"}, status=status.HTTP_400_BAD_REQUEST)
        login(request._request, user)
        return Response({"username": user.get_username(), "is_staff": bool(getattr(user, "is_staff", False))})


class LogoutView(APIView):
    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    @extend_schema(responses={200: UserSerializer})
    def get(self, request: Request) -> Response:
        user: Any = request.user
        return Response({"username": user.get_username(), "is_staff": bool(user.is_staff)})
