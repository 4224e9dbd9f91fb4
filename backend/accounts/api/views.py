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
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from accounts.api.serializers import CsrfSerializer, LoginSerializer, UserSerializer


@method_decorator(ensure_csrf_cookie, name="dispatch")
class CsrfView(APIView):
    """Sets the CSRF cookie that unsafe requests must echo in X-CSRFToken."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: CsrfSerializer}, auth=[])
    def get(self, request: Request) -> Response:
        return Response({"csrf_token": get_token(request._request)})


@method_decorator(csrf_protect, name="dispatch")
class LoginView(APIView):
    """Signs a user in. CSRF-protected although anonymous, against login CSRF."""

    permission_classes = [permissions.AllowAny]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"

    @extend_schema(
        request=LoginSerializer,
        responses={200: UserSerializer, 400: OpenApiResponse(description="invalid username or password")},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        params = LoginSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        user = authenticate(
            request._request, username=params.validated_data["username"], password=params.validated_data["password"]
        )
        if user is None:
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
