from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.choices import API_TOKEN_STATES, TokenScope
from accounts.models import ApiToken
from core.roles import Role, flag_role
from core.serializers import StrictSerializer

USERNAME_RE = r"^[\w.@+-]{1,150}$"


# The code of a wrong current password: what the password change counts against a guesser.
WRONG_PASSWORD = "wrong_password"  # noqa: S105 - an error code, not a password


class LoginSerializer(StrictSerializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)


class UserSerializer(serializers.Serializer[Any]):
    """The signed-in person: the UI offers only what `role` may do."""

    username = serializers.CharField()
    email = serializers.CharField()
    is_staff = serializers.BooleanField()
    role = serializers.ChoiceField(choices=Role.choices)


class CsrfSerializer(serializers.Serializer[Any]):
    csrf_token = serializers.CharField()


def _checked_password(value: str, user: User | None = None) -> str:
    try:
        validate_password(value, user)
    except DjangoValidationError as exc:
        raise serializers.ValidationError(list(exc.messages)) from exc
    return value


class PasswordChangeSerializer(StrictSerializer):
    current_password = serializers.CharField(max_length=4096, trim_whitespace=False)
    new_password = serializers.CharField(max_length=4096, trim_whitespace=False)

    def validate_current_password(self, value: str) -> str:
        user = self.context["user"]
        if not user.check_password(value):
            raise serializers.ValidationError("this is not your current password", code=WRONG_PASSWORD)
        return value

    def validate_new_password(self, value: str) -> str:
        return _checked_password(value, self.context["user"])


class PersonSerializer(serializers.ModelSerializer[User]):
    role = serializers.SerializerMethodField()

    class Meta:
        model = User
        fields = ["id", "username", "email", "role", "is_active", "last_login", "date_joined"]

    @extend_schema_field(serializers.ChoiceField(choices=Role.choices))
    def get_role(self, user: User) -> str:
        return flag_role(user).value


class PersonCreateSerializer(StrictSerializer):
    username = serializers.RegexField(
        USERNAME_RE, max_length=150, error_messages={"invalid": "1-150 letters, digits and . @ + - _"}
    )
    email = serializers.EmailField(required=False, allow_blank=True, default="")
    password = serializers.CharField(max_length=4096, trim_whitespace=False, write_only=True)
    role = serializers.ChoiceField(choices=Role.choices)

    def validate_password(self, value: str) -> str:
        return _checked_password(value)


class PersonUpdateSerializer(StrictSerializer):
    email = serializers.EmailField(required=False, allow_blank=True)
    password = serializers.CharField(max_length=4096, trim_whitespace=False, required=False, write_only=True)
    role = serializers.ChoiceField(choices=Role.choices, required=False)
    is_active = serializers.BooleanField(required=False)

    def validate_password(self, value: str) -> str:
        user = self.context.get("user")
        return _checked_password(value, user if isinstance(user, User) else None)


class ApiTokenSerializer(serializers.ModelSerializer[ApiToken]):
    user = serializers.CharField(source="user.username", read_only=True)
    scope = serializers.ChoiceField(choices=TokenScope.choices)
    state = serializers.SerializerMethodField()
    expires_at = serializers.DateTimeField(
        source="ends_at", read_only=True, help_text="when it stops working: the end asked for, within the site's limit"
    )

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "name",
            "prefix",
            "scope",
            "created_at",
            "expires_at",
            "last_used_at",
            "revoked_at",
            "state",
            "user",
        ]

    @extend_schema_field(serializers.ChoiceField(choices=API_TOKEN_STATES))
    def get_state(self, token: ApiToken) -> str:
        return token.state()


class IssuedApiTokenSerializer(ApiTokenSerializer):
    token = serializers.SerializerMethodField(help_text="Shown once; the server keeps only its SHA-256.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "token"]

    def get_token(self, token: ApiToken) -> str:
        return str(self.context["plaintext"])


class ApiTokenCreateSerializer(StrictSerializer):
    name = serializers.CharField(max_length=100)
    scope = serializers.ChoiceField(choices=TokenScope.choices, default=TokenScope.READ)
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="at most FATHOM_API_TOKEN_MAX_DAYS ahead; null: that longest allowed"
    )


class ApiTokenQuerySerializer(StrictSerializer):
    all = serializers.BooleanField(default=False, help_text="everyone's tokens (admins only)")
