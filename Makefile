# Fathom's single entry point. `make demo` runs the product, `make test` runs every suite.
# Everything installs itself (deploy/install.sh) and keeps its state under ./var.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
ROOT := $(CURDIR)
VENV := $(ROOT)/var/venv
PYTHON := $(VENV)/bin/python
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
GO_LDFLAGS := -X main.version=$(VERSION)
# The backend's environment: the private services plus development defaults.
BACKEND_ENV = set -a && eval "$$(bash deploy/services.sh env)" && set +a && cd backend

.PHONY: help demo demo-screenshots test install install-system services-start services-stop \
        frontend agents agents-testclock packages backup restore migrate openapi openapi-check contract contract-check \
        interop-test lab-test lab-bench lab-noise lab-corpus lab-soak bench-truth bench-scheduler bench-analysis bench-alerts bench-ingest bench-queries bench-load bench-agent bench-ui alert-drill clean

help:
	@echo "make demo          run Fathom with a demo mesh (Ctrl-C stops everything)"
	@echo "make test          install what is missing and run every test suite"
	@echo "make demo-screenshots  run the demo until it has history, photograph its views into docs/screenshots (root)"
	@echo "make frontend      build the web UI into frontend/dist"
	@echo "make agents        build the static fathom-agent and fathom-lab binaries"
	@echo "make packages      fathom-agent .deb and .rpm for amd64 and arm64 into var/packages/ (nfpm)"
	@echo "make backup BACKUP_DIR=DIR   the database and the server's secrets into DIR (restore: make restore)"
	@echo "make agents-testclock  build fathom-agent-testclock, whose waits a test can speed up (never deploy it)"
	@echo "make interop-test  perfSONAR interop: pScheduler client, archiver receiver, pSConfig, against a fake node"
	@echo "make lab-test      check every lab scenario: configured against measured (root)"
	@echo "make lab-bench     the lab emulator's throughput, added RTT and CPU profile (root)"
	@echo "make bench-scheduler  plan exclusive throughput slots for full meshes up to 200 agents"
	@echo "make lab-noise     capture real lab runs' noise for bench-analysis into backend/analysis/lab_noise.json (root)"
	@echo "make bench-analysis   detection delay and false alarms of every regression rule, per path case on lab noise"
	@echo "make lab-corpus    record the labelled corpus of lab scenarios for bench-truth (root; CORPUS_SEED, CORPUS_COUNT, CORPUS_FIRST;"
	@echo "                   policed scenarios' ramps: python -m tests.lab.lab_corpus --ramps, docs/lab.md)"
	@echo "make bench-truth   the analysis judged against the labelled corpus: labels, ceilings, ECMP members, false alarms, detection delays"
	@echo "make bench-alerts  the cost of one alert evaluation at 500 paths, as a fraction of its interval"
	@echo "make bench-ingest  per-packet RTT samples per second through the result API beside a raw COPY"
	@echo "make bench-queries  path history (1 day, 30 days, 1 year), grid and Paths list server time, rollup refresh cost, 100 agents"
	@echo "make bench-load    500 simulated agents against the real stack for 10 minutes: errors, latency, backlog"
	@echo "make bench-agent   the agent's footprint: binary size, idle RSS and CPU, RSS during a throughput test"
	@echo "make bench-ui      a path page from a cold cache in Chromium: bytes transferred, time to the first chart"
	@echo "make lab-soak      30 min on an unseen network: labels, one incident naming a shared degraded link, no false finding (root)"
	@echo "make alert-drill   alerting end to end: regressions, clearing, silence on the lab; killed worker, agent down (root)"
	@echo "make openapi       regenerate backend/openapi.yaml and the UI's types from it"
	@echo "make contract      regenerate the UI's types from the JSON Schemas in contract/"
	@echo "make services-stop stop the private PostgreSQL and Redis"

install:
	bash deploy/install.sh all

install-system:
	bash deploy/install.sh system

services-start: install-system
	bash deploy/services.sh start

services-stop:
	bash deploy/services.sh stop

frontend:
	cd frontend && npm run build

agents:
	cd agents && CGO_ENABLED=0 go build -trimpath -ldflags "$(GO_LDFLAGS)" -o bin/fathom-agent ./cmd/fathom-agent
	cd agents && CGO_ENABLED=0 go build -trimpath -ldflags "$(GO_LDFLAGS)" -o bin/fathom-lab ./cmd/fathom-lab

# The agent as .deb and .rpm (deploy/packaging/build.sh; PKG_VERSION and PKG_ARCHES override).
packages:
	bash deploy/packaging/build.sh

# The database (pg_dump) and the server's secrets, and back (deploy/backup.sh; docs/install.md).
backup:
	@test -n "$(BACKUP_DIR)" || { echo "usage: make backup BACKUP_DIR=/path/to/new/dir"; exit 2; }
	bash deploy/backup.sh backup "$(BACKUP_DIR)"

restore:
	@test -n "$(BACKUP_DIR)" || { echo "usage: make restore BACKUP_DIR=/path/to/backup"; exit 2; }
	bash deploy/backup.sh restore "$(BACKUP_DIR)"

# The agent whose waits FATHOM_AGENT_TEST_CLOCK_RATE speeds up (agents/internal/clock), for
# the system tests' hour-long outage; `make agents` never builds it.
agents-testclock:
	cd agents && CGO_ENABLED=0 go build -trimpath -tags fathomtestclock -ldflags "-X main.version=$(VERSION)-testclock" \
	  -o bin/fathom-agent-testclock ./cmd/fathom-agent

migrate: services-start
	$(BACKEND_ENV) && FATHOM_DEBUG=1 $(PYTHON) manage.py migrate --no-input

openapi:
	$(BACKEND_ENV) && FATHOM_DEBUG=1 $(PYTHON) manage.py spectacular --validate --file openapi.yaml
	cd frontend && npm run -s gen:api

openapi-check:
	$(BACKEND_ENV) && FATHOM_DEBUG=1 $(PYTHON) manage.py spectacular --validate --file $(ROOT)/var/openapi.generated.yaml
	diff -u backend/openapi.yaml var/openapi.generated.yaml || \
	  { echo "backend/openapi.yaml is stale: run 'make openapi' and commit it"; exit 1; }

contract:
	$(PYTHON) contract/codegen.py

contract-check:
	$(PYTHON) contract/codegen.py --check

demo: install services-start agents
	bash deploy/demo.sh

demo-screenshots: install services-start agents
	bash deploy/demo-screenshots.sh

test: install services-start
	bash tests/run-suites.sh

# One line per case: the perfsonar app's tests (a fake pScheduler over real HTTPS, a live
# Fathom receiver) and the fake's own tests.
interop-test: install services-start
	$(BACKEND_ENV) && $(VENV)/bin/pytest -v -p no:cacheprovider perfsonar
	$(VENV)/bin/pytest -v -p no:cacheprovider -c tests/pytest.ini tests/interop

lab-test: install agents
	$(PYTHON) -m tests.lab.lab_check

lab-bench: install agents
	$(PYTHON) -m tests.lab.lab_bench

# The lock serialises lab use with the lab system tests.
lab-noise: install agents
	flock /tmp/fathom-lab.lock $(PYTHON) -m tests.lab.lab_noise

bench-analysis: install
	cd backend && $(PYTHON) -m analysis.bench_analysis

# Draws CORPUS_COUNT scenarios from the matrix with CORPUS_SEED, from the CORPUS_FIRST-th on, and
# records them into backend/analysis/truth/corpus/ (about 90 s a scenario). The lock serialises
# lab use with the lab system tests.
CORPUS_SEED ?= 31
CORPUS_COUNT ?= 32
CORPUS_FIRST ?= 0
lab-corpus: install agents
	flock /tmp/fathom-lab.lock $(PYTHON) -m tests.lab.lab_corpus --seed $(CORPUS_SEED) --count $(CORPUS_COUNT) --first $(CORPUS_FIRST)

bench-truth: install
	cd backend && $(PYTHON) -m analysis.truth.bench --wrong

# Issue 31's acceptance lab: 30 minutes, not in make test (tests/system/test_truth_soak.py).
lab-soak: install services-start agents frontend
	FATHOM_SOAK=1 FATHOM_ARTIFACTS=$(ROOT)/tests/artifacts $(VENV)/bin/pytest -q -s -p no:cacheprovider \
	  -c tests/pytest.ini tests/system/test_truth_soak.py

alert-drill: install services-start agents frontend
	FATHOM_ARTIFACTS=$(ROOT)/tests/artifacts $(VENV)/bin/pytest -q -s -p no:cacheprovider -c tests/pytest.ini \
	  tests/system/test_alert_drill.py tests/system/test_alert_outages.py

bench-alerts: install services-start
	$(BACKEND_ENV) && $(PYTHON) -m alerts.bench_alerts

bench-ingest: install services-start
	$(BACKEND_ENV) && $(PYTHON) -m measurements.bench_ingest

bench-queries: install services-start
	$(BACKEND_ENV) && $(PYTHON) -m fathom.bench_queries

bench-load: install services-start
	$(BACKEND_ENV) && $(PYTHON) -m fathom.bench_load

# Its own database and Redis database, so it may run beside the system tests.
bench-agent: install services-start agents
	FATHOM_ARTIFACTS=$(ROOT)/tests/artifacts/bench-agent FATHOM_SYSTEST_DB=fathom_bench_agent FATHOM_SYSTEST_REDIS_DB=6 \
	  $(VENV)/bin/pytest -q -s -p no:cacheprovider -c tests/pytest.ini tests/system/bench_agent.py

# The same stack, serving the built UI as production does.
bench-ui: install services-start agents frontend
	FATHOM_ARTIFACTS=$(ROOT)/tests/artifacts/bench-ui FATHOM_SYSTEST_DB=fathom_bench_ui FATHOM_SYSTEST_REDIS_DB=7 \
	  $(VENV)/bin/pytest -q -s -p no:cacheprovider -c tests/pytest.ini tests/system/bench_ui.py

bench-scheduler: install
	cd backend && $(PYTHON) -m meshes.bench_scheduler

clean:
	bash deploy/services.sh stop || true
	rm -rf var frontend/dist agents/bin tests/artifacts
