"""Kerberos on the Thrift port (`--auth kerberos`, SASL GSSAPI; client/gss.py, both ends): a real MIT
KDC (tests/harness/kdc.py), a real server process with a service keytab, and real clients: Hive 4's
HiveMetaStoreClient logging in from a keytab, Spark's own Hive client with a user's ticket cache,
and Python's thrift + pure-sasl. Each call runs as the principal's short name; the refusals are
what a person sees: no ticket, an expired ticket, a server whose keytab went stale, a client that
does not speak SASL."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid

import pytest

from tests.harness import jvm, start_our_server, stop_process
from tests.harness import kdc as kdc_harness
from tests.harness.backends import ci_mode
from tests.harness.kerberos_client import module_dir
from tests.harness.procs import REPO_ROOT, VENV_PYTHON

SERVICE = f"hive/{kdc_harness.SERVICE_HOST}"


@pytest.fixture(scope="module")
def kdc(tmp_path_factory):
    if kdc_harness.MISSING:
        if ci_mode():
            pytest.fail(f"MIT Kerberos tools missing: {kdc_harness.MISSING} (.ci/services.sh installs them)")
        pytest.skip(f"MIT Kerberos tools missing: {kdc_harness.MISSING}")
    k = kdc_harness.Kdc(tmp_path_factory.mktemp("kdc")).start()
    try:
        yield k
    finally:
        k.stop()


@pytest.fixture
def kerberized(kdc, own_backend_url, tmp_path):
    """A server with its own service principal and keytab: (port, proc, principal, keytab)."""
    principal, keytab = kdc.add_keytab(SERVICE)  # re-keyed for each server: earlier keytabs go stale
    port, proc = start_our_server(own_backend_url, tmp_path / "server", env=kdc.env, extra_args=[
        "--auth", "kerberos", "--kerberos-principal", principal, "--kerberos-keytab", str(keytab),
        "--read-timeout", "10"])
    try:
        yield port, proc, principal, keytab
    finally:
        stop_process(proc)


def _python_client(env: dict, port: int, table: str) -> str:
    mod = module_dir()
    if mod is None:
        if ci_mode():
            pytest.fail("krb5-config (Debian's libkrb5-dev) is needed to build pykerberos")
        pytest.skip("krb5-config (libkrb5-dev) missing: no Python Kerberos client")
    env = {**env, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(mod)])}
    done = subprocess.run([VENV_PYTHON, "-m", "tests.harness.kerberos_client", kdc_harness.SERVICE_HOST, str(port),
                           table], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    return (done.stdout + done.stderr).strip()


def _java_classes(tmp_path, program: str = "KerberosClient"):
    compiled = jvm.hive4_client(program)  # compiled once (tests/harness/jvm.py)
    if compiled is None:
        if ci_mode():
            pytest.fail("javac and the Hive 4 metastore classpath are needed")
        pytest.skip("no javac or Hive 4 metastore classpath")
    jars, out = compiled
    return f"{jars}:{out}"


def _java_client(kdc, classpath: str, port: int, table: str, *login: str, env: dict | None = None) -> str:
    done = subprocess.run(["java", *jvm.java_flags(), f"-Djava.security.krb5.conf={kdc.krb5_conf}", "-cp", classpath,
                           "KerberosClient",
                           f"thrift://{kdc_harness.SERVICE_HOST}:{port}", f"hive/_HOST@{kdc_harness.REALM}", table,
                           *login],
                          env=env or kdc.env, capture_output=True, text=True, timeout=180)
    return done.stdout.strip() or done.stderr[-2000:]


@pytest.mark.backends("postgresql")  # the login is the subject (delegation tokens: every backend)
def test_kerberos_logins_with_real_clients(kdc, kerberized, tmp_path):
    port, proc, principal, keytab = kerberized
    suffix = uuid.uuid4().hex[:6]

    # Hive 4's client, logged in from a keytab (as a service such as Trino or HiveServer2 does)
    alice, alice_keytab = kdc.add_keytab(f"alice{suffix}")
    got = _java_client(kdc, _java_classes(tmp_path), port, f"k_java_{suffix}", alice, str(alice_keytab))
    assert got == f"owner alice{suffix}", got

    # pure-sasl from a ticket cache (kinit with a password); set_ugi-style owners are ignored
    bob = kdc.add_user(f"bob{suffix}", "Bob-Pass-1")
    bob_env = kdc.kinit(bob, password="Bob-Pass-1")
    got = _python_client(bob_env, port, f"k_py_{suffix}")
    assert got == f"owner bob{suffix}", got
    # PyIceberg's HiveCatalog with hive.kerberos-authentication, same ticket cache
    got = _python_client(bob_env, port, "--pyiceberg")
    assert got.startswith("namespaces ") and "default" in got.split(" ", 1)[1].split(","), got

    log = open(proc.log_path).read()
    assert f"authenticated as {alice} (kerberos)" in log and f"authenticated as {bob} (kerberos)" in log
    assert f"principal={bob} auth=kerberos" in log and f"call=create_table object=default.k_py_{suffix}" in log


def test_delegation_tokens_with_hive_client(kdc, kerberized, tmp_path):
    """Hive 4's client gets and renews a token over Kerberos; a task with only the token logs in over
    DIGEST-MD5 and runs as the token's owner, cannot get a token itself, and is refused once the
    token is cancelled."""
    port, proc, principal, keytab = kerberized
    suffix = uuid.uuid4().hex[:6]
    erin, erin_keytab = kdc.add_keytab(f"erin{suffix}")
    classpath = _java_classes(tmp_path)
    assert _java_client(kdc, classpath, port, f"k_tok_{suffix}", erin, str(erin_keytab)) == f"owner erin{suffix}"
    done = subprocess.run(["java", *jvm.java_flags(), f"-Djava.security.krb5.conf={kdc.krb5_conf}", "-cp",
                           _java_classes(tmp_path, "TokenClient"), "TokenClient",
                           f"thrift://{kdc_harness.SERVICE_HOST}:{port}", f"hive/_HOST@{kdc_harness.REALM}",
                           f"k_tok_{suffix}", erin, str(erin_keytab)],
                          env=kdc.env, capture_output=True, text=True, timeout=180)
    lines = dict(line.split(" ", 1) for line in done.stdout.strip().splitlines() if " " in line)
    day_ahead = time.time() * 1000 + 23 * 3600 * 1000
    assert "renewed" in lines and int(lines["renewed"]) > day_ahead, done.stdout + done.stderr[-3000:]
    assert lines.get("token-owner") == f"erin{suffix}", done.stdout + done.stderr[-3000:]
    assert "issued only to callers authenticated with Kerberos" in lines.get("token-get", ""), done.stdout
    assert "cancelled" in done.stdout.splitlines()
    assert "delegation token refused" in lines.get("after-cancel", "") and "not known" in lines["after-cancel"], \
        done.stdout
    log = open(proc.log_path).read()
    assert f"authenticated as erin{suffix} (token)" in log
    assert "auth=kerberos client=" in log and "call=get_delegation_token" in log
    assert "call=cancel_delegation_token" in log


@pytest.mark.backends("mysql")  # the refusals are the subject
def test_kerberos_refusals(kdc, kerberized, tmp_path):
    port, proc, principal, keytab = kerberized
    suffix = uuid.uuid4().hex[:6]
    carol = kdc.add_user(f"carol{suffix}", "Carol-Pass-1")

    # a wrong password never gets a ticket
    with pytest.raises(subprocess.CalledProcessError) as wrong:
        kdc.kinit(carol, password="Not-Carol-1")
    assert "Password incorrect" in wrong.value.stderr, wrong.value.stderr

    # no ticket at all: the client library says so before anything is sent
    empty = {**kdc.env, "KRB5CCNAME": f"FILE:{tmp_path / 'no-such-cache'}"}
    got = _python_client(empty, port, f"k_none_{suffix}")
    assert got.startswith("error") and "No Kerberos credentials available" in got, got

    # an expired ticket: refused when the service ticket is asked for
    short = kdc.kinit(carol, password="Carol-Pass-1", lifetime="3s")
    time.sleep(4)
    got = _python_client(short, port, f"k_expired_{suffix}")
    assert got.startswith("error") and "expired" in got.lower(), got

    # the server's keytab went stale (the service principal was re-keyed): the server refuses and
    # the client is told why
    fresh = kdc.kinit(carol, password="Carol-Pass-1")
    assert _python_client(fresh, port, f"k_before_{suffix}") == f"owner carol{suffix}"
    kdc.kadmin(f"cpw -randkey {principal}")
    again = kdc.kinit(carol, password="Carol-Pass-1")
    got = _python_client(again, port, f"k_stale_{suffix}")
    assert got.startswith("error") and "Kerberos authentication failed" in got, got
    log = open(proc.log_path).read()
    assert "SASL authentication refused: Kerberos authentication failed" in log

    # a client without SASL is told the server needs authentication
    from thrift.protocol import TBinaryProtocol
    from thrift.Thrift import TApplicationException
    from thrift.transport import TSocket, TTransport

    from thrift_idl.hive_metastore import ThriftHiveMetastore

    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(20_000)
    plain = TTransport.TBufferedTransport(sock)
    plain.open()
    with pytest.raises(TApplicationException, match="this metastore requires authentication"):
        ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(plain)).get_all_databases()
    plain.close()


@pytest.mark.backends("sqlite")  # Spark's client and the transport do not depend on the store's database
def test_spark_with_a_keytab(kdc, kerberized, tmp_path):
    """Spark's own Hive client, configured as a Kerberized deployment does (core-site.xml,
    hive.metastore.sasl.enabled, the service principal, spark.kerberos.principal/keytab as
    spark-submit --principal/--keytab; no ticket cache at all). (Hive 2.3's
    client opens a plain socket under SASL: Spark over TLS is tested without Kerberos,
    tests/test_authentication.py.)"""
    port, proc, principal, keytab = kerberized
    suffix = uuid.uuid4().hex[:6]
    dave, dave_keytab = kdc.add_keytab(f"dave{suffix}")
    env = {**kdc.env, "KRB5CCNAME": f"FILE:{tmp_path / 'no-ticket-cache'}"}
    conf = tmp_path / "hadoop-conf"
    conf.mkdir()
    (conf / "core-site.xml").write_text(
        "<configuration><property><name>hadoop.security.authentication</name><value>kerberos</value>"
        "</property></configuration>")
    env.update(HADOOP_CONF_DIR=str(conf), JDK_JAVA_OPTIONS=f"-Djava.security.krb5.conf={kdc.krb5_conf}",
               SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=str(REPO_ROOT))
    out = tmp_path / "spark.json"
    done = subprocess.run([VENV_PYTHON, str(REPO_ROOT / "tests" / "spark" / "secure_sql.py"), "--metastore-uri",
                           f"thrift://{kdc_harness.SERVICE_HOST}:{port}", "--warehouse", str(proc.warehouse),
                           "--out", str(out), "--principal", principal.replace(kdc_harness.SERVICE_HOST, "_HOST"),
                           "--user-principal", dave, "--keytab", str(dave_keytab)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.exists(), done.stderr[-3000:]
    got = json.loads(out.read_text())
    assert got == {"tables": ["secured"], "owner": f"dave{suffix}", "rows": [[1, "a"], [2, "b"]]}, got
    assert f"authenticated as {dave} (kerberos)" in open(proc.log_path).read()


def test_bad_kerberos_settings_fail_the_start(kdc, tmp_path):
    from tests.cli_helpers import assert_one_line_error, run_cli

    url = f"sqlite:///{tmp_path / 'store.db'}"
    base = ("serve", "--port", "0", "--db-url", url, "--warehouse", str(tmp_path / "wh"))
    assert_one_line_error(run_cli(*base, "--auth", "kerberos"), "--auth kerberos needs --kerberos-principal")
    assert_one_line_error(run_cli(*base, "--kerberos-keytab", "x"), "need --auth kerberos")
    _, keytab = kdc.add_keytab(f"other/{uuid.uuid4().hex[:6]}")
    assert_one_line_error(run_cli(*base, "--auth", "kerberos", "--kerberos-principal",
                                  f"hive/nohost@{kdc_harness.REALM}", "--kerberos-keytab", str(keytab), env=kdc.env),
                          "Kerberos:")
