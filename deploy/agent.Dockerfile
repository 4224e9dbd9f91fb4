# The measurement agent: the static fathom-agent binary plus the probe tools it runs, as an
# unprivileged user. Built with the same make target as `make demo` and CI. The base images
# are build arguments (the public ones by default, or a local one where no registry can be reached).
ARG GO_IMAGE=golang:1.26-bookworm
ARG DEBIAN_IMAGE=debian:12-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY Makefile ./
COPY agents/go.mod agents/go.sum agents/
RUN cd agents && go mod download
COPY agents/ agents/
RUN make agents VERSION=docker

FROM ${DEBIAN_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends \
      iperf3 iputils-ping traceroute scamper ca-certificates libcap2-bin \
    && rm -rf /var/lib/apt/lists/* \
    # ping falls back to a raw socket where ICMP datagram sockets are not allowed: the one
    # privilege a probe needs, given to ping alone.
    && setcap cap_net_raw+ep /usr/bin/ping \
    && useradd --system --uid 10001 --home-dir /var/lib/fathom-agent fathom \
    && mkdir -p /var/lib/fathom-agent && chown fathom:fathom /var/lib/fathom-agent
COPY --from=build /src/agents/bin/fathom-agent /usr/local/bin/fathom-agent
# The TWAMP-light reflector answers peers' latency tests on UDP 862 (TWAMP's port, below
# 1024): the agent's one privilege, as a file capability for an unprivileged user.
RUN setcap cap_net_bind_service+ep /usr/local/bin/fathom-agent
COPY deploy/agent-entrypoint.sh /usr/local/bin/agent-entrypoint.sh
USER fathom
VOLUME /var/lib/fathom-agent
ENTRYPOINT ["/usr/local/bin/agent-entrypoint.sh"]
