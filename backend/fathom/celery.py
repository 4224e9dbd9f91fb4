"""The Celery application; its periodic schedule lives in fathom.scheduled."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fathom.settings")

app = Celery("fathom")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_finalize.connect
def register_periodic_tasks(sender: Celery, **_: object) -> None:
    from fathom.scheduled import register

    register(sender)
