# Stand-in for python:3.11-slim-bookworm: Debian's Python 3.11 in a virtualenv on PATH, so
# `python` and `pip install` behave as in the public image.
ARG BASE_IMAGE=fathom-base/debian:12
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* && python3 -m venv /usr/local/python
ENV PATH=/usr/local/python/bin:$PATH
