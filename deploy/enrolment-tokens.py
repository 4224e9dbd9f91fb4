#!/usr/bin/env python3
"""One single-use enrolment token per host, for rolling out many agents at once.

    FATHOM_API_TOKEN=fpt_... python3 deploy/enrolment-tokens.py https://fathom.example.org hosts.txt

hosts.txt holds one agent name per line (blank lines and # comments skipped). Each token
enrols only the agent of that name and expires after --expires-in seconds (default a day).
Prints "name token" per line, for the script that writes each host's /etc/fathom-agent.env.
The API token needs the write scope of an operator (Tokens page, or POST /api/v1/api-tokens/).
Standard library only: it runs on any machine with Python 3.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request


def create(server: str, api_token: str, name: str, expires_in_s: int) -> str:
    body = json.dumps({"agent_name": name, "expires_in_s": expires_in_s, "note": "enrolment-tokens.py"}).encode()
    request = urllib.request.Request(  # noqa: S310 - main() allows http(s) URLs only
        f"{server.rstrip('/')}/api/v1/enrollment-tokens/",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {api_token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310 - as above
        token: str = json.load(reply)["token"]
        return token


def main() -> int:
    parser = argparse.ArgumentParser(description="one single-use enrolment token per agent name")
    parser.add_argument("server", help="the Fathom server's URL")
    parser.add_argument("names", help="file with one agent name per line")
    parser.add_argument("--expires-in", type=int, default=86400, help="token lifetime in seconds")
    args = parser.parse_args()
    if not args.server.startswith(("https://", "http://")):
        print(f"{args.server!r} is not an http(s) URL", file=sys.stderr)
        return 2
    api_token = os.environ.get("FATHOM_API_TOKEN", "")
    if not api_token:
        print("set FATHOM_API_TOKEN to an operator's write-scope API token", file=sys.stderr)
        return 2
    with open(args.names, encoding="utf-8") as lines:
        names = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    for name in names:
        try:
            print(name, create(args.server, api_token, name, args.expires_in), flush=True)
        except urllib.error.HTTPError as exc:
            print(f"{name}: refused ({exc.code}): {exc.read().decode(errors='replace')[:300]}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
