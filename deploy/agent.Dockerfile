# The measurement agent: the static fathom-agent binary plus the probe tools it runs.
# Built with the same make target as `make demo` and CI.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY Makefile ./
COPY agents/go.mod agents/go.sum agents/
RUN cd agents && go mod download
COPY agents/ agents/
RUN make agents VERSION=docker

FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      iperf3 iputils-ping traceroute scamper ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/agents/bin/fathom-agent /usr/local/bin/fathom-agent
COPY deploy/agent-entrypoint.sh /usr/local/bin/agent-entrypoint.sh
VOLUME /var/lib/fathom-agent
ENTRYPOINT ["/usr/local/bin/agent-entrypoint.sh"]
