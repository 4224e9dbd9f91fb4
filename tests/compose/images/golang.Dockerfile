# Stand-in for golang:1.26-bookworm: the host's Go toolchain (the build context is prepared
# by tests/compose/base-images.sh), with make as in the public image.
ARG BASE_IMAGE=fathom-base/debian:12
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends make && rm -rf /var/lib/apt/lists/*
COPY go/ /usr/local/go/
ENV PATH=/usr/local/go/bin:/go/bin:$PATH GOPATH=/go
RUN go version
