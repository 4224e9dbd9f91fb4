"""The per-node archive token: what a node's http archiver sends (in `_headers`) so that
Fathom knows which node a pushed result comes from and that the node may send it.

The token is derived (HMAC of the node's id and token generation under the server's
secret key), never stored: Fathom puts it in every task it creates, an operator can read it
again to configure a node that subscribes to an exported template, and rotating it is
bumping the generation.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid

from django.conf import settings

from perfsonar.models import Node

PREFIX = "fps_"


def _mac(node_id: uuid.UUID, generation: int) -> str:
    message = f"perfsonar-archive:{node_id}:{generation}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def archive_token(node: Node) -> str:
    return f"{PREFIX}{node.pk.hex}.{_mac(node.pk, node.token_generation)}"


def authorization_header(node: Node) -> str:
    return f"Bearer {archive_token(node)}"


def node_of_token(token: str) -> Node | None:
    """The node whose current archive token this is, or None. Constant-time comparison."""
    if not token.startswith(PREFIX) or len(token) > 200:
        return None
    node_hex, dot, mac = token[len(PREFIX) :].partition(".")
    if not dot:
        return None
    try:
        node_id = uuid.UUID(hex=node_hex)
    except ValueError:
        return None
    node = Node.objects.select_related("agent").filter(pk=node_id, agent__revoked_at__isnull=True).first()
    if node is None or not hmac.compare_digest(mac, _mac(node.pk, node.token_generation)):
        return None
    return node
