# The web, worker and beat image: Django + Celery with the built UI, served by whitenoise.
# Built with the same make targets as `make demo` and CI. The base images are build arguments
# (the public ones by default, or a local one where no registry can be reached).
ARG NODE_IMAGE=node:20-bookworm
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${NODE_IMAGE} AS frontend
WORKDIR /src
COPY Makefile ./
COPY frontend/package.json frontend/package-lock.json frontend/
RUN cd frontend && npm ci --no-audit --no-fund
COPY frontend/ frontend/
RUN make frontend

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    FATHOM_FRONTEND_DIST=/app/frontend/dist FATHOM_STATIC_ROOT=/app/static
WORKDIR /app/backend
COPY backend/requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt
COPY contract/ /app/contract/
COPY backend/ ./
COPY --from=frontend /src/frontend/dist /app/frontend/dist
# collectstatic needs settings but no database or secrets of the deployment: a throwaway
# key that passes the strength check and is never stored in the image.
RUN FATHOM_SECRET_KEY=$(python -c "import secrets; print(secrets.token_urlsafe(50))") \
    FATHOM_DATABASE_URL=postgresql://build@localhost/build python manage.py collectstatic --no-input
RUN useradd --system --uid 10001 fathom && mkdir -p /data && chown fathom /data
USER fathom
EXPOSE 8000
# Threaded workers: a slow request holds a thread, not a worker (compose sets the same).
CMD ["gunicorn", "--no-control-socket", "--bind", "0.0.0.0:8000", "--worker-class", "gthread", "--workers", "3", "--threads", "8", "--timeout", "120", "--access-logfile", "-", "fathom.wsgi"]
