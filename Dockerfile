# hudi-metastore: the Thrift server on a slim Python, as a non-root user.
#   docker build -t hudi-metastore .        (or: podman build / buildah bud)
#   docker run -p 9083:9083 -p 9090:9090 hudi-metastore --db-url postgresql://user@db/metastore
# Configuration: flags after the image name, HUDI_METASTORE_* variables, or a TOML file
# (HUDI_METASTORE_CONFIG); docs/deployment.md.

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# ---------------------------------------------------------------- build: a virtualenv with everything
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# thrift's accelerated protocol (fastbinary) is a C extension built from its sdist; the compiler
# stays in this stage (Debian's current bookworm build, not pinned: security updates replace it)
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
COPY docker/requirements.txt /tmp/requirements.txt
RUN python -m venv /opt/hudi-metastore \
 && /opt/hudi-metastore/bin/pip install --no-compile -r /tmp/requirements.txt \
 && /opt/hudi-metastore/bin/python -c "from thrift.protocol import fastbinary"
WORKDIR /src
COPY pyproject.toml README.md ./
COPY thrift_idl ./thrift_idl
COPY hudi_format ./hudi_format
COPY store ./store
COPY adapter ./adapter
COPY client ./client
COPY pipeline ./pipeline
RUN /opt/hudi-metastore/bin/pip install --no-compile --no-deps . \
 && /opt/hudi-metastore/bin/python -m compileall -q -j 0 /opt/hudi-metastore/lib

# ---------------------------------------------------------------- runtime
FROM ${PYTHON_IMAGE}
# MIT Kerberos' GSS-API library: --auth kerberos calls it through ctypes (adapter/security/gss.py)
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgssapi-krb5-2 \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 hms \
 && useradd --system --uid 10001 --gid hms --home-dir /var/lib/hudi-metastore --create-home --shell /usr/sbin/nologin hms \
 && mkdir -p /warehouse && chown hms:hms /warehouse
COPY --from=build /opt/hudi-metastore /opt/hudi-metastore
ENV PATH=/opt/hudi-metastore/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    HUDI_METASTORE_HOST=0.0.0.0 \
    HUDI_METASTORE_PORT=9083 \
    HUDI_METASTORE_METRICS_PORT=9090 \
    HUDI_METASTORE_METRICS_HOST=0.0.0.0 \
    HUDI_METASTORE_WAREHOUSE=/warehouse \
    HUDI_METASTORE_DB_URL=sqlite:////var/lib/hudi-metastore/metastore.db
USER hms
WORKDIR /var/lib/hudi-metastore
EXPOSE 9083 9090
# ready: the database answers with the schema this version needs (worker 0's /readyz)
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/readyz' % os.environ['HUDI_METASTORE_METRICS_PORT'], timeout=2)"]
ENTRYPOINT ["hudi-metastore", "serve"]
