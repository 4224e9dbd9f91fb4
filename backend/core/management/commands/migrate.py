"""Django's migrate, one at a time: two web processes starting together (the compose `scale`
profile, or several hosts behind one balancer) each migrate at start, and two concurrent
migrations of one database collide. A session advisory lock on the database serialises them;
the second finds nothing left to do."""

from __future__ import annotations

from typing import Any

from django.core.management.commands.migrate import Command as DjangoMigrate
from django.db import connections

LOCK_KEY = "fathom:migrate"


class Command(DjangoMigrate):
    help = DjangoMigrate.help + " Fathom: serialised by an advisory lock, so concurrent starts are safe."

    def handle(self, *args: Any, **options: Any) -> None:
        connection = connections[options["database"]]
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", [LOCK_KEY])
        try:
            super().handle(*args, **options)
        finally:
            # The session lock outlives transactions; it goes with the connection at the latest.
            if connection.connection is not None:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [LOCK_KEY])
