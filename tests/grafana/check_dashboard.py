"""deploy/grafana/fathom.json against Grafana's published dashboard model: the `Dashboard`
type of @grafana/schema (npm), made a JSON Schema by ts-json-schema-generator, in which a
field Grafana does not know, a missing required one or a value of the wrong kind fails.
tests/system/test_prometheus.py runs every panel's and variable's PromQL against a real
Prometheus. Run by the browser-lint suite (tests/run-suites.sh)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

TESTS = Path(__file__).resolve().parents[1]
DASHBOARD = TESTS.parent / "deploy" / "grafana" / "fathom.json"
TYPES = "node_modules/@grafana/schema/dist/types/raw/dashboard/x/types.gen.d.ts"


def schema() -> dict[str, object]:
    made = subprocess.run(
        ["npx", "ts-json-schema-generator", "--path", TYPES, "--type", "Dashboard", "--no-type-check"],
        cwd=TESTS, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if made.returncode != 0:
        raise SystemExit(f"ts-json-schema-generator failed: {made.stderr.strip()[-2000:]}")
    generated: dict[str, object] = json.loads(made.stdout)
    return generated


def main() -> int:
    version = json.loads((TESTS / "node_modules/@grafana/schema/package.json").read_text())["version"]
    validator = jsonschema.Draft7Validator(schema())
    errors = sorted(validator.iter_errors(json.loads(DASHBOARD.read_text())), key=lambda error: list(error.path))
    for error in errors:
        print(f"  {'/'.join(str(part) for part in error.path) or '(top)'}: {error.message}")
    print(f"deploy/grafana/fathom.json: {len(errors)} errors against @grafana/schema {version}'s Dashboard")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
