"""Authentication and TLS on the Thrift port (adapter/security/): a real server process with
`--auth password` and TLS, real Python clients (thrift's TSSLSocket and TSaslClientTransport with
pure-sasl's PLAIN) that log in, and the refusals a person sees: a wrong password, a client without
SASL, a plaintext client against TLS."""

from __future__ import annotations

import os
import socket
import ssl
import struct
import subprocess
import sys
import uuid

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TSocket, TSSLSocket, TTransport

from tests.harness import jvm, start_our_server, stop_process
from tests.harness.backends import ci_mode
from tests.harness.procs import REPO_ROOT, VENV_PYTHON
from thrift_idl.hive_metastore import ThriftHiveMetastore
from thrift_idl.hive_metastore.ttypes import Database, MetaException

pytest.importorskip("puresasl")


def _certificate(tmp_path):
    cert, key = tmp_path / "server.pem", tmp_path / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


def _add_user(password_file, user: str, password: str) -> None:
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "users", "add", "--file", str(password_file), user],
                          input=password + "\n", text=True, capture_output=True, check=True)
    assert f"added {user}" in done.stdout


@pytest.fixture
def secured_server(own_backend_url, tmp_path):
    tmp = tmp_path
    cert, key = _certificate(tmp)
    passwords = tmp / "passwords"
    _add_user(passwords, "alice", "correct horse")
    _add_user(passwords, "bob", "battery staple")
    port, proc = start_our_server(own_backend_url, tmp, extra_args=[
        "--auth", "password", "--auth-password-file", str(passwords),
        "--tls-cert", str(cert), "--tls-key", str(key), "--read-timeout", "5", "--admin-users", "alice"])
    try:
        yield port, cert, proc
    finally:
        stop_process(proc)


def _sasl_client(port: int, cert, user: str, password: str):
    sock = TSSLSocket.TSSLSocket("127.0.0.1", port, ca_certs=str(cert))
    sock.setTimeout(20_000)
    transport = TTransport.TSaslClientTransport(sock, "127.0.0.1", "hive", mechanism="PLAIN",
                                                username=user, password=password)
    client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(transport))
    transport.open()
    return client, transport


@pytest.fixture
def java_client():
    """The Hive 4 client classpath and a directory holding SecureClient.class (None: not here)."""
    compiled = jvm.hive4_client("SecureClient")  # compiled once (tests/harness/jvm.py)
    if compiled is None and ci_mode():
        pytest.fail("javac and the Hive 4 metastore classpath are needed")
    return compiled


def _check_hive4_client(java_client, port: int, cert, tmp_path, db: str) -> None:
    """Hive 4's client with hive.metastore.use.SSL and a JKS truststore holding our certificate."""
    jars, classes = java_client
    store = tmp_path / "truststore.jks"
    subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "hms", "-file", str(cert),
                    "-keystore", str(store), "-storepass", "changeit", "-storetype", "JKS"],
                   check=True, capture_output=True)

    def run(*login: str) -> str:
        done = subprocess.run(["java", *jvm.java_flags(), "-cp", f"{jars}:{classes}", "SecureClient", str(port),
                               str(store),
                               "changeit", db, *login], capture_output=True, text=True, timeout=120)
        return done.stdout.strip() + "\n" + done.stderr

    assert run("alice", "correct horse").startswith("owner alice\n")
    wrong = run("alice", "wrong")
    assert "Peer indicated failure: authentication failed for user alice: wrong user name or password" in wrong, wrong
    no_sasl = run()  # without SASL (and set_ugi off, whose failure Hive's client only logs)
    assert "this metastore requires authentication" in no_sasl, no_sasl[-3000:]


def _raw_tls(port: int, cert):
    ctx = ssl.create_default_context(cafile=str(cert))
    return ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=20), server_hostname="127.0.0.1")


def _check_handshake_limits(port: int, cert) -> None:
    """The size limit and the read timeout hold during the handshake."""
    with _raw_tls(port, cert) as raw:  # a START declaring 10 MB is refused before it is read
        raw.sendall(struct.pack(">BI", 1, 10_000_000))
        status, length = struct.unpack(">BI", raw.recv(5))
        assert status == 3 and b"exceeds" in raw.recv(length)
    with _raw_tls(port, cert) as raw:  # a client that stalls is closed after --read-timeout (5 s)
        raw.sendall(struct.pack(">BI", 1, 5) + b"PL")
        status, length = struct.unpack(">BI", raw.recv(5))
        assert status == 3 and b"stalled" in raw.recv(length)


@pytest.mark.backends("sqlite")  # the transport does not depend on the store's database
def test_password_login_over_tls_and_refusals(secured_server, java_client, tmp_path):
    port, cert, proc = secured_server
    name = f"authdb_{uuid.uuid4().hex[:6]}"
    client, transport = _sasl_client(port, cert, "alice", "correct horse")
    try:
        client.set_ugi("mallory", [])  # ignored: the caller is who logged in
        client.create_database(Database(name=name, description="", locationUri="", parameters={}, ownerName="mallory"))
        assert client.get_database(name).ownerName == "alice"
        for _ in range(3):  # several requests on one authenticated connection
            assert name in client.get_all_databases()
    finally:
        transport.close()

    client, transport = _sasl_client(port, cert, "bob", "battery staple")
    try:  # authorization is on (auto with --auth): bob does not own alice's database
        with pytest.raises(MetaException, match="bob"):
            client.drop_database(name, True, True)
    finally:
        transport.close()

    with pytest.raises(TTransport.TTransportException,
                       match="authentication failed for user alice: wrong user name or password"):
        _sasl_client(port, cert, "alice", "wrong")
    with pytest.raises(TTransport.TTransportException, match="authentication failed for user nobody"):
        _sasl_client(port, cert, "nobody", "whatever")

    # a client without SASL (over TLS) is told what is missing; the log says it too
    sock = TSSLSocket.TSSLSocket("127.0.0.1", port, ca_certs=str(cert))
    sock.setTimeout(20_000)
    plain = TTransport.TBufferedTransport(sock)
    plain.open()
    with pytest.raises(TApplicationException, match="this metastore requires authentication"):
        ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(plain)).get_all_databases()
    plain.close()

    # plaintext against the TLS port: told in plaintext Thrift
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(20_000)
    plaintext = TTransport.TBufferedTransport(sock)
    plaintext.open()
    with pytest.raises(TApplicationException, match="this metastore accepts TLS connections only"):
        ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(plaintext)).get_all_databases()
    plaintext.close()

    _check_handshake_limits(port, cert)
    if java_client is not None:
        _check_hive4_client(java_client, port, cert, tmp_path, name)

    log = open(proc.log_path).read()
    assert "SASL authentication refused: authentication failed for user alice" in log
    assert "expected a SASL handshake" in log
    assert "a plaintext client on the TLS port" in log
    assert "stalled in the SASL handshake" in log
    assert "authenticated as alice (password)" in log


def test_bad_security_settings_fail_the_start(tmp_path):
    """Each is one line naming what to fix, before the store is opened; `--auth` also comes from
    the environment (HUDI_METASTORE_AUTH) as every serve flag does."""
    from tests.cli_helpers import assert_one_line_error, run_cli

    url = f"sqlite:///{tmp_path / 'store.db'}"
    base = ("serve", "--port", "0", "--db-url", url, "--warehouse", str(tmp_path / "wh"))
    assert_one_line_error(run_cli(*base, env={"HUDI_METASTORE_AUTH": "password"}),
                          "--auth password needs --auth-password-file", "users add")
    assert_one_line_error(run_cli(*base, "--auth", "password", "--auth-password-file", str(tmp_path / "none")),
                          "has no users")
    bad = tmp_path / "cert.pem"
    bad.write_text("not a certificate")
    assert_one_line_error(run_cli(*base, "--tls-cert", str(bad)), "both --tls-cert and --tls-key")
    assert_one_line_error(run_cli(*base, "--tls-cert", str(bad), "--tls-key", str(bad)),
                          "cannot load the TLS certificate")


def _signed_client_certificate(tmp_path):
    """A CA and a client certificate it signed."""
    ca, ca_key = tmp_path / "ca.pem", tmp_path / "ca.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test CA",
                    "-keyout", str(ca_key), "-out", str(ca)], check=True, capture_output=True)
    key, csr, cert = tmp_path / "client.key", tmp_path / "client.csr", tmp_path / "client.pem"
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=spark",
                    "-keyout", str(key), "-out", str(csr)], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
                    "-CAcreateserial", "-days", "2", "-out", str(cert)], check=True, capture_output=True)
    return ca, cert, key


@pytest.mark.backends("sqlite")  # the transport does not depend on the store's database
def test_client_certificates_required(own_backend_url, tmp_path):
    """--tls-client-ca: a client with a certificate the CA signed is served; one without is refused."""
    cert, key = _certificate(tmp_path)
    ca, client_cert, client_key = _signed_client_certificate(tmp_path)
    port, proc = start_our_server(own_backend_url, tmp_path, extra_args=[
        "--tls-cert", str(cert), "--tls-key", str(key), "--tls-client-ca", str(ca)])
    try:
        sock = TSSLSocket.TSSLSocket("127.0.0.1", port, ca_certs=str(cert),
                                     certfile=str(client_cert), keyfile=str(client_key))
        sock.setTimeout(20_000)
        transport = TTransport.TBufferedTransport(sock)
        transport.open()
        assert "default" in ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport)).get_all_databases()
        transport.close()

        sock = TSSLSocket.TSSLSocket("127.0.0.1", port, ca_certs=str(cert))
        sock.setTimeout(20_000)
        transport = TTransport.TBufferedTransport(sock)
        with pytest.raises(TTransport.TTransportException) as refused:  # TLS 1.3: the alert comes on the first read
            transport.open()
            ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport)).get_all_databases()
        # the client only sees the connection end in the handshake (EOF or reset: TLS has no reason text)
        assert refused.value.message == "unexpected exception"
        transport.close()
    finally:
        stop_process(proc)
    log = open(proc.log_path).read()
    assert "TLS handshake failed: [SSL: PEER_DID_NOT_RETURN_A_CERTIFICATE]" in log
    assert "UNEXPECTED_EOF" not in log  # the harness's port probe (connect, close) is not logged


@pytest.mark.backends("sqlite")  # the transport does not depend on the store's database
def test_spark_over_tls(own_backend_url, tmp_path):
    """Spark's own Hive client (Hive 2.3) with hive.metastore.use.SSL and a JKS truststore holding
    our certificate: creates, writes and reads a table over TLS."""
    import json

    cert, key = _certificate(tmp_path)
    store = tmp_path / "truststore.jks"
    subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "hms", "-file", str(cert), "-keystore", str(store),
                    "-storepass", "changeit", "-storetype", "JKS"], check=True, capture_output=True)
    port, proc = start_our_server(own_backend_url, tmp_path / "server", extra_args=[
        "--tls-cert", str(cert), "--tls-key", str(key)])
    try:
        out = tmp_path / "spark.json"
        done = subprocess.run([VENV_PYTHON, str(REPO_ROOT / "tests" / "spark" / "secure_sql.py"), "--metastore-uri",
                               f"thrift://localhost:{port}", "--warehouse", str(proc.warehouse), "--out", str(out),
                               "--truststore", str(store)],
                              env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1",
                                   "PYTHONPATH": str(REPO_ROOT)},
                              cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert out.exists(), done.stderr[-3000:]
        got = json.loads(out.read_text())
        assert got["tables"] == ["secured"] and got["rows"] == [[1, "a"], [2, "b"]], got
        assert "a plaintext client" not in open(proc.log_path).read()
    finally:
        stop_process(proc)
