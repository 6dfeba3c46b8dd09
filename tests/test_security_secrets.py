"""Secrets and the HTTP port (docs/security.md, "Secrets"): the HTTP port binds loopback by default
and, when configured, speaks only TLS and answers only requests with the bearer token (checked with
a real HTTP client, requests); a database password on the command line is warned about and never
printed, in errors or log lines."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from adapter.secret_text import mask_secrets
from tests.harness import free_port, start_our_server, stop_process

requests = pytest.importorskip("requests")
TOKEN = "s3cr3t-token-for-tests"


def _self_signed(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


@pytest.mark.backends("sqlite")
def test_metrics_port_tls_and_token(own_backend_url, tmp_path):
    cert, key = _self_signed(tmp_path)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    http_port = free_port()
    port, proc = start_our_server(own_backend_url, tmp_path, extra_args=[
        "--host", "0.0.0.0", "--metrics-port", str(http_port), "--metrics-tls-cert", str(cert),
        "--metrics-tls-key", str(key), "--metrics-token-file", str(token_file)])
    try:
        url = f"https://127.0.0.1:{http_port}"
        assert requests.get(f"{url}/metrics", verify=str(cert), timeout=10).status_code == 401
        wrong = requests.get(f"{url}/metrics", verify=str(cert), timeout=10,
                             headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.headers["WWW-Authenticate"].startswith("Bearer")
        ok = requests.get(f"{url}/metrics", verify=str(cert), timeout=10,
                          headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and "# TYPE" in ok.text
        assert requests.get(f"{url}/healthz", verify=str(cert), timeout=10).text == "ok\n"  # liveness: open
        with pytest.raises(requests.exceptions.ConnectionError):  # plaintext is not served
            requests.get(f"http://127.0.0.1:{http_port}/metrics", timeout=10,
                         headers={"Authorization": f"Bearer {TOKEN}"})
        # the Thrift port listens on every interface (--host 0.0.0.0); the HTTP port on loopback only
        log = proc.log_path.read_text()
        assert f"HTTP on https://127.0.0.1:{http_port}/" in log and "bearer token is required" in log
        assert TOKEN not in log
    finally:
        stop_process(proc)


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def test_database_password_never_printed(tmp_path):
    secret = "hunter2-very-secret"
    # on the command line: warned about, and the connection error does not show it
    bad_port = free_port()
    run = _cli("db", "upgrade", "--db-url", f"postgresql+psycopg://hms:{secret}@127.0.0.1:{bad_port}/nothing")
    out = run.stdout + run.stderr
    assert run.returncode != 0 and secret not in out, out
    assert "password is on the command line" in out and "HUDI_METASTORE_DB_PASSWORD" in out
    # a URL the driver cannot parse: the error quotes it, masked
    run = _cli("db", "upgrade", "--db-url", f"postgresql://hms:{secret}@127.0.0.1:notaport/x")
    assert run.returncode == 2 and secret not in run.stdout + run.stderr, run.stderr
    # from the environment: no warning, and `config show` masks it
    run = _cli("config", "show", "--db-url", f"postgresql://hms@127.0.0.1:{bad_port}/x",
               env={"HUDI_METASTORE_DB_PASSWORD": secret})
    assert secret not in run.stdout + run.stderr and "password is on the command line" not in run.stderr
    assert "db_password" in run.stdout
    assert mask_secrets(f"x mysql+pymysql://u:{secret}@h:1/db y") == "x mysql+pymysql://u:***@h:1/db y"
