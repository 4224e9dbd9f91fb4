# Stand-in for redis:7-bookworm: Debian's Redis, data in /data owned by uid 999 as in the
# public image (docker-compose.yml runs it as 999:999).
ARG BASE_IMAGE=fathom-base/debian:12
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends redis-server && rm -rf /var/lib/apt/lists/* \
    && mkdir /data && chown 999:999 /data
WORKDIR /data
CMD ["redis-server"]
