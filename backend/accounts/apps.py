from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Signing in to the web UI, and the choice labels the UI renders."""

    name = "accounts"
