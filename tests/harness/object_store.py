"""An S3-compatible object store for the tests: moto's server mode on a free loopback port.

Clients find it only through the standard AWS environment (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
`AWS_SECRET_ACCESS_KEY`, `AWS_DEFAULT_REGION`), never through flags. The environment is set when
pytest configures itself, before any server process or the SparkSession (whose Python workers
inherit it) starts; the store itself starts on first use.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from dataclasses import dataclass

#: the endpoint configure_environment chose (an endpoint set by the user is left alone)
_OURS = "HMS_TEST_OBJECT_STORE_ENDPOINT"
#: the variables every client (s3fs, botocore, hudi-rs's object_store) reads
_ENV = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_REGION")


def configure_environment() -> None:
    """Point the AWS environment at the test object store's port (chosen now, served later).
    An endpoint already in the environment is left alone (a real S3-compatible store)."""
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    if endpoint and endpoint != os.environ.get(_OURS):
        return
    # ours (chosen by pytest's controller process when pytest-xdist runs workers, which inherit
    # its environment): each worker process serves a store of its own, so each chooses a port
    port = _reserve_port()
    endpoint = f"http://127.0.0.1:{port}"
    os.environ.update({
        _OURS: endpoint,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",  # moto accepts any; never a real credential
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
    })


@dataclass
class ObjectStore:
    endpoint: str

    def bucket(self) -> str:
        """A new, empty bucket (one per test keeps tests isolated)."""
        import s3fs

        name = f"t-{uuid.uuid4().hex[:12]}"
        s3fs.S3FileSystem(skip_instance_cache=True).mkdir(name)
        return name

    def requests(self) -> list[tuple[str, str, str]]:
        """(method, path, query) of every request moto served so far (its request log)."""
        return list(_REQUEST_LOG)

    def storage_options(self) -> dict[str, str]:
        """hudi-rs / object_store options of this store (read from the environment)."""
        env = {k: os.environ[k] for k in _ENV if k in os.environ}
        return {
            "aws_endpoint_url": env["AWS_ENDPOINT_URL"],
            "aws_access_key_id": env["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": env["AWS_SECRET_ACCESS_KEY"],
            "aws_region": env.get("AWS_DEFAULT_REGION", "us-east-1"),
            "aws_allow_http": "true",
        }


_REQUEST_LOG: list[tuple[str, str, str]] = []


#: the endpoint's port, held from configure_environment until moto serves it: the
#: store starts on first use, maybe half an hour later, and a port only chosen then could be taken
_RESERVED: list[socket.socket] = []


def _reserve_port() -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(0)  # a listening socket keeps others' binds off, SO_REUSEADDR or not
    _RESERVED.append(sock)
    return sock.getsockname()[1]


def start_object_store():
    """Start moto on the endpoint's port; returns (ObjectStore, stop). A server that cannot start
    fails here within 60 s (moto's own start waits for ever)."""
    from urllib.parse import urlparse

    from moto.server import ThreadedMotoServer

    endpoint = os.environ["AWS_ENDPOINT_URL"]
    parsed = urlparse(endpoint)
    for sock in _RESERVED:  # released for moto's own socket
        sock.close()
    _RESERVED.clear()
    server = ThreadedMotoServer(ip_address=parsed.hostname or "127.0.0.1", port=parsed.port or 80, verbose=False)
    started = threading.Thread(target=server.start, daemon=True)
    started.start()
    started.join(60)
    if started.is_alive():
        raise RuntimeError(f"moto's server did not start on {endpoint} within 60 s (port taken?)")
    _log_requests(server)
    return ObjectStore(endpoint), server.stop


def _log_requests(server) -> None:
    """Record each request's method, path and query in _REQUEST_LOG (WSGI middleware around moto)."""
    app = server._server.app  # werkzeug's server calls `self.server.app` per request

    def logged(environ, start_response):
        _REQUEST_LOG.append((environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""),
                             environ.get("QUERY_STRING", "")))
        return app(environ, start_response)

    server._server.app = logged
