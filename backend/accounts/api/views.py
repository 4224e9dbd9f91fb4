from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate, login, logout, update_session_auth_hash
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.middleware.csrf import get_token
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_protect, ensure_csrf_cookie
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import services
from accounts.api.serializers import (
    WRONG_PASSWORD,
    ApiTokenCreateSerializer,
    ApiTokenQuerySerializer,
    ApiTokenSerializer,
    CsrfSerializer,
    IssuedApiTokenSerializer,
    LoginSerializer,
    PasswordChangeSerializer,
    PersonCreateSerializer,
    PersonSerializer,
    PersonUpdateSerializer,
    UserSerializer,
)
from accounts.authentication import SessionOrBearerAuthentication
from accounts.choices import TokenScope
from accounts.login_guard import LoginGuard, PasswordChangeGuard, throttled_message
from accounts.models import ApiToken
from accounts.services import AccountError, person_snapshot
from audit.choices import AuditAction, AuditObject
from audit.services import Actor, record
from core.api.permissions import AdminOnly
from core.roles import Role, has_role, role_of


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
    sign-ins are limited per client address and per username (accounts.login_guard). It reads
    no credentials: a script's API token has no say in signing a person in."""

    authentication_classes: list[type[Any]] = []
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
        wait_s = guard.begin()
        if wait_s:
            return Response(
                {"detail": throttled_message(wait_s)},
                status=status.HTTP_429_TOO_MANY_REQUESTS,
                headers={"Retry-After": str(wait_s)},
            )
        user = authenticate(request._request, username=username, password=params.validated_data["password"])
        if user is None:
            guard.failed()
            return Response({"detail": "invalid username or password"}, status=status.HTTP_400_BAD_REQUEST)
        guard.succeeded()
        login(request._request, user)
        return Response(UserSerializer(me(user)).data)


class LogoutView(APIView):
    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    @extend_schema(responses={200: UserSerializer})
    def get(self, request: Request) -> Response:
        return Response(UserSerializer(me(request.user)).data)


class PasswordView(APIView):
    """Changes the signed-in person's own password (not a token's: a script cannot lock its
    owner out). The session stays signed in; other sessions of the person end."""

    authentication_classes = [SessionOrBearerAuthentication]

    @extend_schema(
        request=PasswordChangeSerializer,
        responses={
            204: None,
            429: OpenApiResponse(description="too many wrong current passwords for this person"),
        },
    )
    def post(self, request: Request) -> Response:
        user = request.user
        assert isinstance(user, User)
        guard = PasswordChangeGuard(user.get_username().strip().casefold())
        wait_s = guard.begin()
        if wait_s:
            return Response(
                {"detail": f"too many wrong current passwords; try again in {wait_s} s"},
                status=status.HTTP_429_TOO_MANY_REQUESTS,
                headers={"Retry-After": str(wait_s)},
            )
        params = PasswordChangeSerializer(data=request.data, context={"user": user})
        valid = params.is_valid()
        current = params.errors.get("current_password", []) if not valid else []
        if not any(getattr(error, "code", None) == WRONG_PASSWORD for error in current):
            guard.succeeded()  # no wrong guess (a missing field, a weak new one): nothing counts
        if not valid:
            raise ValidationError(params.errors)
        with transaction.atomic():
            before = person_snapshot(user)
            user.set_password(params.validated_data["new_password"])
            user.save(update_fields=["password"])
            after = {**person_snapshot(user), "password_changed": True}
            record(Actor.of(request), AuditAction.UPDATE, AuditObject.PERSON, user.pk, user.username, before, after)
        update_session_auth_hash(request._request, user)
        return Response(status=status.HTTP_204_NO_CONTENT)


def me(user: Any) -> dict[str, Any]:
    return {
        "username": user.get_username(),
        "email": getattr(user, "email", ""),
        "is_staff": bool(user.is_staff),
        "role": role_of(user),
    }


def _field_error(exc: AccountError) -> ValidationError:
    return ValidationError({exc.field: [str(exc)]})


class PersonViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet[User]
):
    """People and their roles (admins). Nobody is deleted: a person who leaves is disabled, so
    the audit log keeps naming them; the last active admin can be neither demoted nor disabled."""

    permission_classes = [AdminOnly]
    serializer_class = PersonSerializer
    queryset = User.objects.order_by("username")

    @extend_schema(request=PersonCreateSerializer, responses={201: PersonSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if isinstance(request.auth, ApiToken):
            # A person made with a password the script chose would outlive the token.
            raise PermissionDenied("people are added from a signed-in session, not with an API token")
        params = PersonCreateSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        with transaction.atomic():
            try:
                user = services.create_person(data["username"], data["password"], Role(data["role"]), data["email"])
            except AccountError as exc:
                raise _field_error(exc) from exc
            record(
                Actor.of(request),
                AuditAction.CREATE,
                AuditObject.PERSON,
                user.pk,
                user.username,
                None,
                person_snapshot(user),
            )
        return Response(PersonSerializer(user).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=PersonUpdateSerializer, responses={200: PersonSerializer})
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        user = self.get_object()
        params = PersonUpdateSerializer(data=request.data, context={"user": user})
        params.is_valid(raise_exception=True)
        data = params.validated_data
        if "password" in data and isinstance(request.auth, ApiToken):
            # A script holding an admin's token must not take accounts over.
            raise PermissionDenied("a password is set from a signed-in session, not with an API token")
        with transaction.atomic():
            before = person_snapshot(user)
            try:
                services.update_person(
                    user,
                    role=Role(data["role"]) if "role" in data else None,
                    is_active=data.get("is_active"),
                    email=data.get("email"),
                    password=data.get("password"),
                )
            except AccountError as exc:
                raise _field_error(exc) from exc
            after = person_snapshot(user)
            if "password" in data:
                after["password_changed"] = True  # the log shows that it changed, never what to
            record(Actor.of(request), AuditAction.UPDATE, AuditObject.PERSON, user.pk, user.username, before, after)
        return Response(PersonSerializer(user).data)


class ApiTokenViewSet(mixins.ListModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet[ApiToken]):
    """Personal API tokens for scripts: each person manages their own; admins see and revoke
    everyone's. The token is shown once, in the create response."""

    serializer_class = ApiTokenSerializer

    def get_queryset(self) -> QuerySet[ApiToken]:
        tokens = ApiToken.objects.select_related("user")
        if self.action == "list":
            query = ApiTokenQuerySerializer(data=self.request.query_params)
            query.is_valid(raise_exception=True)
            if query.validated_data["all"]:
                if not has_role(self.request.user, Role.ADMIN):
                    raise PermissionDenied("only admins list everyone's tokens")
                return tokens
        elif has_role(self.request.user, Role.ADMIN):
            return tokens
        return tokens.filter(user=self.request.user.pk)

    @extend_schema(parameters=[ApiTokenQuerySerializer])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=ApiTokenCreateSerializer, responses={201: IssuedApiTokenSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if isinstance(request.auth, ApiToken):
            # A token that could mint tokens would outlive its own end and revocation.
            raise PermissionDenied("API tokens are made from a signed-in session, not by another token")
        params = ApiTokenCreateSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        user = request.user
        assert isinstance(user, User)
        with transaction.atomic():
            try:
                issued = services.create_api_token(user, data["name"], TokenScope(data["scope"]), data["expires_at"])
            except AccountError as exc:
                raise _field_error(exc) from exc
            token = issued.token
            record(
                Actor.of(request),
                AuditAction.CREATE,
                AuditObject.API_TOKEN,
                token.pk,
                _token_repr(token),
                None,
                _audited_token(token),
            )
        body = IssuedApiTokenSerializer(token, context={"plaintext": issued.plaintext}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Revokes the token; it stays listed, as revoked."""
        token = self.get_object()
        with transaction.atomic():
            before = _audited_token(token)
            services.revoke_api_token(token)
            record(
                Actor.of(request),
                AuditAction.REVOKE,
                AuditObject.API_TOKEN,
                token.pk,
                _token_repr(token),
                before,
                _audited_token(token),
            )
        return Response(status=status.HTTP_204_NO_CONTENT)


def _token_repr(token: ApiToken) -> str:
    return f"{token.name} ({token.prefix}…, {token.user.username})"


def _audited_token(token: ApiToken) -> dict[str, Any]:
    return {
        "name": token.name,
        "prefix": token.prefix,
        "owner": token.user.username,
        "scope": token.scope,
        "expires_at": token.expires_at,
        "revoked_at": token.revoked_at,
    }
