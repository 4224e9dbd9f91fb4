"""Alert email over SMTP (STARTTLS or TLS from settings): text and HTML alternatives, one
subject per incident (the state goes in the body's first line, so mail clients keep the
thread), and Message-ID / In-Reply-To / References threading every message of an incident
on its first one."""

from __future__ import annotations

import html
import re
import smtplib
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection

from alerts.services.messages import evidence_lines, readable_time
from alerts.transports.base import ConfigError, Sent, Transport, TransportError, require_object

ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")
SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
MAX_RECIPIENTS = 50


def subject(message: dict[str, Any]) -> str:
    if message["incident_id"] is None:
        return f"[Fathom] {message['title']}"
    return f"[Fathom #{message['incident_id']}] {message['title']}"


def text_body(message: dict[str, Any]) -> str:
    lines = [f"{message['headline'].upper()}" + (f" ({message['changes']})" if message["changes"] else ""), ""]
    if message.get("acknowledged_by"):
        lines += [f"Acknowledged by {message['acknowledged_by']}", ""]
    if message.get("cause"):
        lines += [f"Where: {message['cause']}", ""]
    for state, items in (("FIRING", message["firing"]), ("RESOLVED", message["resolved"])):
        for alert in items:
            lines.append(f"{state}: {alert['summary']}")
            since = readable_time(alert["started_at"])
            lines.append(f"  rule {alert['rule']}, severity {alert['severity']}, since {since}")
            lines += [f"  {key}: {value}" for key, value in evidence_lines(alert.get("evidence") or {})]
            if alert.get("advice"):
                lines += ["  What to do:"] + [f"    {line}" for line in alert["advice"].splitlines()]
            if alert.get("url"):
                lines.append(f"  Path page: {alert['url']}")
            lines.append("")
    opened = readable_time(message["opened_at"])
    lines += [f"Incident: {message['url']}", f"Severity {message['severity']}, opened {opened}"]
    return "\n".join(lines) + "\n"


def html_body(message: dict[str, Any]) -> str:
    e = html.escape
    parts = [
        f"<p><strong>{e(message['headline'])}</strong>"
        + (f" ({e(message['changes'])})" if message["changes"] else "")
        + "</p>"
    ]
    if message.get("cause"):
        parts.append(f"<p>Where: {e(message['cause'])}</p>")
    for state, items in (("Firing", message["firing"]), ("Resolved", message["resolved"])):
        for alert in items:
            parts.append(f"<h3>{state}: {e(alert['summary'])}</h3>")
            since = readable_time(alert["started_at"])
            parts.append(f"<p>Rule {e(alert['rule'])}, severity {e(alert['severity'])}, since {e(since)}</p>")
            evidence = evidence_lines(alert.get("evidence") or {})
            rows = "".join(f"<tr><th align='left'>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in evidence)
            if rows:
                parts.append(f"<table>{rows}</table>")
            if alert.get("advice"):
                parts.append("<p>What to do:</p><pre>" + e(alert["advice"]) + "</pre>")
            if alert.get("url"):
                parts.append(f"<p><a href='{e(alert['url'])}'>Path page at the time</a></p>")
    parts.append(f"<p><a href='{e(message['url'])}'>Open the incident</a> · severity {e(message['severity'])}</p>")
    return "<html><body>" + "".join(parts) + "</body></html>"


class EmailTransport(Transport):
    kind = "email"

    @classmethod
    def target(cls, config: dict[str, Any]) -> str:
        return ", ".join(config.get("to", []))

    @classmethod
    def clean_config(cls, raw: Any) -> dict[str, Any]:
        config = require_object(raw, {"to"}, {"to"})
        to = config["to"]
        if not isinstance(to, list) or not to or len(to) > MAX_RECIPIENTS:
            raise ConfigError(f"to must be a list of 1 to {MAX_RECIPIENTS} addresses")
        bad = [a for a in to if not isinstance(a, str) or not ADDRESS.match(a)]
        if bad:
            raise ConfigError(f"not an email address: {', '.join(map(str, bad))}")
        return {"to": to}

    def send(self, message: dict[str, Any], key: str) -> Sent:
        headers = {"Message-ID": f"<{key}@{settings.ALERT_EMAIL_DOMAIN}>", "X-Fathom-Delivery": key}
        root = message.get("email_root_id")
        if root:
            if message["sequence"] == 1:
                headers["Message-ID"] = root
            else:
                headers["In-Reply-To"] = root
                headers["References"] = root
        mail = EmailMultiAlternatives(
            subject(message), text_body(message), settings.DEFAULT_FROM_EMAIL, self.config["to"], headers=headers
        )
        mail.attach_alternative(html_body(message), "text/html")
        connection = get_connection(SMTP_BACKEND, fail_silently=False, timeout=settings.EMAIL_TIMEOUT)
        try:
            connection.send_messages([mail])
        except smtplib.SMTPRecipientsRefused as exc:
            raise TransportError(f"the SMTP server refused every recipient: {exc.recipients}", permanent=True) from exc
        except smtplib.SMTPAuthenticationError as exc:
            raise TransportError(f"SMTP authentication refused ({exc.smtp_code})", permanent=True) from exc
        except smtplib.SMTPResponseException as exc:
            permanent = 500 <= exc.smtp_code < 600
            raise TransportError(
                f"SMTP {exc.smtp_code}: {exc.smtp_error!r}", permanent=permanent, status_code=exc.smtp_code
            ) from exc
        except (TimeoutError, smtplib.SMTPException, OSError) as exc:
            raise TransportError(f"SMTP {settings.EMAIL_HOST}:{settings.EMAIL_PORT}: {exc}") from exc
        return Sent(250, f"accepted for {', '.join(self.config['to'])}")
