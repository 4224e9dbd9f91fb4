# Stand-in for timescale/timescaledb:2.19.3-pg15: Debian's PostgreSQL 15 with the TimescaleDB
# that deploy/install.sh built on the host (the build context is prepared by
# tests/compose/base-images.sh), and an entrypoint that honours the public image's
# POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB on first start.
ARG BASE_IMAGE=fathom-base/debian:12
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
COPY timescaledb/lib/ /usr/lib/postgresql/15/lib/
COPY timescaledb/extension/ /usr/share/postgresql/15/extension/
COPY timescaledb-entrypoint.sh /usr/local/bin/timescaledb-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/timescaledb-entrypoint.sh"]
