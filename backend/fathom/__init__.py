"""Fathom's Django project: settings, URL routing, the Celery app and its schedule."""

from fathom.celery import app as celery_app

__all__ = ["celery_app"]
