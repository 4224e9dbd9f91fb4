from django.apps import AppConfig


class AuditConfig(AppConfig):
    """Who changed what, when: one row per change to meshes, agents, tokens, rules, silences,
    channels, people and settings."""

    name = "audit"
