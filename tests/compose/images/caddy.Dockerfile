# Stand-in for caddy:2: Debian's Caddy (2.6) with the public image's layout (config and data
# under /config and /data) and its wget for the health check.
ARG BASE_IMAGE=fathom-base/debian:12
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends caddy wget && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /config /data
ENV XDG_CONFIG_HOME=/config XDG_DATA_HOME=/data
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
