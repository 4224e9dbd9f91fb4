# Stand-in for node:20-bookworm: the host's Node.js and npm (the build context is prepared by
# tests/compose/base-images.sh), with make as in the public image.
ARG BASE_IMAGE=fathom-base/debian:12
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends make && rm -rf /var/lib/apt/lists/*
COPY node/ /usr/local/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && node --version && npm --version
# Node keeps its own root store: trust the system's, as the host does.
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
