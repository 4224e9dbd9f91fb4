from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Signing in to the web UI."""

    name = "accounts"
