"""The project's own tools behind authentication (client/security.py): every CLI command that talks
to a server, and a pipeline write, against servers with a password (SASL PLAIN), Kerberos (SASL
GSSAPI from a ticket cache, a real KDC), TLS (with a client certificate) and TLS with a password;
the settings also come from the config file and the environment; a refused or missing log-in is one
line naming the problem. The servers start once for the module, on SQLite (the log-in does not
depend on the store); the commands run in this process (adapter.cli.main)."""

from __future__ import annotations

import json
import os
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.harness import kdc as kdc_harness
from tests.harness import start_our_server, stop_process
from tests.harness.backends import ci_mode
from tests.harness.cli_logs import cli_logs_to_capsys
from tests.harness.hudi_tables import table_copy
from tests.test_authentication import _add_user, _certificate, _signed_client_certificate

# one worker runs the module (its servers start once), with the pipeline's Spark driver
pytestmark = pytest.mark.xdist_group("spark")
MECHANISMS = ("password", "kerberos", "tls", "tls+password")
PASSWORD = "correct horse"


class Servers:
    def __init__(self, tmp):
        self.tmp = tmp
        self.procs: dict[str, object] = {}
        self.uris: dict[str, str] = {}
        self.kdc = None
        self.krb_env: dict[str, str] = {}
        self.user = ""

    def start(self, name: str, *extra: str, env: dict | None = None) -> None:
        where = self.tmp / name.replace("+", "-")
        roots = ["--storage-roots", str(self.roots)]  # the tests' tables: sync-storage may write there
        port, proc = start_our_server(f"sqlite:///{where / 'm.db'}", where, extra_args=[*extra, *roots], env=env)
        self.procs[name], self.uris[name] = proc, f"thrift://localhost:{port}"

    def login(self, mechanism: str) -> list[str]:
        """The CLI options that log in to the server of `mechanism`."""
        password = ["--user", "alice", "--password-file", str(self.password_file)]
        tls = ["--tls-ca", str(self.cert)]
        kerberos = ["--auth", "kerberos", "--kerberos-principal", f"hive/_HOST@{kdc_harness.REALM}"]
        return {"password": password, "kerberos": kerberos,
                "tls": tls + ["--tls-client-cert", str(self.client_cert), "--tls-client-key", str(self.client_key)],
                "tls+password": tls + password}[mechanism]

    def security(self, mechanism: str):
        from client import Security

        tls = {"tls_ca": str(self.cert)} if mechanism.startswith("tls") else {}
        if mechanism == "tls":
            tls.update(tls_cert=str(self.client_cert), tls_key=str(self.client_key))
        if mechanism == "kerberos":
            return Security(auth="kerberos")
        if mechanism.endswith("password"):
            return Security(auth="password", user="alice", password=PASSWORD, **tls)
        return Security(**tls)


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("login")
    s = Servers(tmp)
    s.roots = tmp_path_factory.getbasetemp()
    s.cert, key = _certificate(tmp)
    ca, s.client_cert, s.client_key = _signed_client_certificate(tmp)
    s.password_file = tmp / "alice.password"
    s.password_file.write_text(PASSWORD + "\n")
    passwords = tmp / "passwords"
    _add_user(passwords, "alice", PASSWORD)
    password = ["--auth", "password", "--auth-password-file", str(passwords), "--admin-users", "alice"]
    tls = ["--tls-cert", str(s.cert), "--tls-key", str(key)]
    starts = [("plain", [], None),  # a migration's source
              ("password", password, None), ("tls", [*tls, "--tls-client-ca", str(ca)], None),
              ("tls+password", tls + password, None)]
    try:
        if not kdc_harness.MISSING:
            s.kdc = kdc_harness.Kdc(tmp / "kdc").start()
            principal, keytab = s.kdc.add_keytab(f"hive/{kdc_harness.SERVICE_HOST}")
            s.user = f"carol{uuid.uuid4().hex[:6]}"
            s.krb_env = s.kdc.kinit(s.kdc.add_user(s.user, "Carol-Pass-1"), password="Carol-Pass-1")
            starts.append(("kerberos", ["--auth", "kerberos", "--kerberos-principal", principal, "--kerberos-keytab",
                                        str(keytab), "--admin-users", s.user], s.kdc.env))
        with ThreadPoolExecutor(len(starts)) as pool:  # the servers start at once
            for f in [pool.submit(s.start, name, *extra, env=env) for name, extra, env in starts]:
                f.result()
        yield s
    finally:
        for proc in s.procs.values():
            stop_process(proc)
        if s.kdc is not None:
            s.kdc.stop()


@pytest.fixture
def using(servers, monkeypatch):
    """using(mechanism) -> (uri, login options), with the Kerberos user's ticket cache in the environment."""
    for k in list(os.environ):
        if k.startswith("HUDI_METASTORE_") and k != "HUDI_METASTORE_CACHE":
            monkeypatch.delenv(k)

    def pick(mechanism: str):
        if mechanism == "kerberos":
            if servers.kdc is None:
                if ci_mode():
                    pytest.fail(f"MIT Kerberos tools missing: {kdc_harness.MISSING}")
                pytest.skip(f"MIT Kerberos tools missing: {kdc_harness.MISSING}")
            for k in ("KRB5_CONFIG", "KRB5CCNAME", "KRB5_KDC_PROFILE", "KRB5RCACHEDIR"):
                monkeypatch.setenv(k, servers.krb_env[k])
        return servers.uris[mechanism], servers.login(mechanism)

    return pick


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """`hudi-metastore ARGV` in this process (the root logger as it was afterwards: main() points
    it at this test's captured stderr)."""
    from adapter.cli import main

    with pytest.MonkeyPatch.context() as mp:
        cli_logs_to_capsys(mp)
        capsys.readouterr()
        code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(result: tuple[int, str, str], *words: str) -> str:
    code, _, err = result
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (code, err)
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_every_command_logs_in(servers, using, capsys, tmp_path, mechanism):
    uri, login = using(mechanism)
    db = f"login_{uuid.uuid4().hex[:6]}"
    at = ["--metastore", uri, *login]

    def ok(*argv: str) -> str:
        code, out, err = cli(capsys, *argv, *at)
        assert code == 0, (argv, out, err)
        return out

    assert f"created database {db}" in ok("create-database", db)
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    ok("import-hudi", base, "--table", f"{db}.t")
    assert f"{db}.t" in ok("stats", f"{db}.t")
    assert "partition(s)" in ok("list-partitions", f"{db}.t")
    assert "file slice(s)" in ok("list-files", f"{db}.t")
    assert "key(s) found" in ok("lookup-keys", f"{db}.t", "no-such-key")
    assert "agrees" in ok("validate", f"{db}.t")
    assert "nothing to repair" in ok("repair", f"{db}.t", "--yes")
    assert "version(s) mirrored" in ok("sync-storage", f"{db}.t")
    assert db in ok("databases", db)
    assert [t["name"] for t in json.loads(ok("tables", db, "--json"))] == ["t"]
    described = json.loads(ok("describe", f"{db}.t", "--json"))
    assert described["hudi"]["table_type"] == "COPY_ON_WRITE" and f"database            {db}" in ok("describe", db)
    if described["partition_keys"]:
        assert "partition(s)" in ok("partitions", f"{db}.t")
    assert f"dropped table {db}.t" in ok("drop-table", f"{db}.t", "--yes")
    gone = f"gone_{uuid.uuid4().hex[:6]}"
    ok("create-database", gone)
    assert f"dropped database {gone}" in ok("drop-database", gone, "--yes")
    source = f"src_{uuid.uuid4().hex[:6]}"
    assert cli(capsys, "create-database", source, "--metastore", servers.uris["plain"])[0] == 0
    code, out, err = cli(capsys, "migrate", "--from", servers.uris["plain"], "--databases", source, "--quiet", *at)
    # (the owner differs where the target authenticates: the database is the caller's there)
    assert code in (0, 1) and "errors" not in out and not err, (out, err)

    from client import HudiCatalog, Security

    security = servers.security(mechanism)  # (Kerberos: the service's host-based name, hive@localhost)
    if mechanism == "kerberos":  # a ticket cache named by the client, not by the environment
        security = Security(auth="kerberos", kerberos_ccache=servers.krb_env["KRB5CCNAME"])
        os.environ["KRB5CCNAME"] = f"FILE:{tmp_path / 'no-ticket-cache'}"  # (using's monkeypatch restores it)
    with HudiCatalog(uri, security=security) as c:
        assert c.get_database(source).name == source
        owner = c._client.get_database(db).ownerName
    log = open(servers.procs[mechanism].log_path).read()
    if mechanism == "kerberos":
        assert owner == servers.user and f"authenticated as {servers.user}@{kdc_harness.REALM} (kerberos)" in log
    elif mechanism.endswith("password"):
        assert owner == "alice" and "authenticated as alice (password)" in log


def test_login_settings_from_the_config_file_and_environment(servers, using, capsys, tmp_path, monkeypatch):
    uri, _ = using("tls+password")
    config = tmp_path / "hudi-metastore.toml"
    config.write_text(f'metastore = "{uri}"\nuser = "alice"\n[stats]\ntls_ca = "{servers.cert}"\n')
    monkeypatch.setenv("HUDI_METASTORE_PASSWORD", PASSWORD)
    one_line_error(cli(capsys, "--config", str(config), "stats", "default.nope"), "default.nope", uri)
    monkeypatch.delenv("HUDI_METASTORE_PASSWORD")
    monkeypatch.setenv("HUDI_METASTORE_PASSWORD_FILE", str(servers.password_file))
    monkeypatch.setenv("HUDI_METASTORE_AUTH", "password")
    monkeypatch.setenv("HUDI_METASTORE_TLS_CA", str(servers.cert))  # ([stats] has it in the file)
    one_line_error(cli(capsys, "--config", str(config), "list-files", "default.nope"), "default.nope", uri)
    assert "authenticated as alice (password)" in open(servers.procs["tls+password"].log_path).read()


def test_refusals_are_one_line(servers, using, capsys, tmp_path):
    uri, login = using("tls+password")
    wrong = tmp_path / "wrong"
    wrong.write_text("not the password\n")
    tls = ["--tls-ca", str(servers.cert)]
    one_line_error(cli(capsys, "stats", "a.b", "--metastore", uri, *tls, "--user", "alice", "--password-file",
                       str(wrong)), "refused the log-in",
                   "authentication failed for user alice: wrong user name or password")
    one_line_error(cli(capsys, "stats", "a.b", "--metastore", uri, *tls), "requires authentication",
                   "--user NAME --password-file FILE", "--auth kerberos")
    one_line_error(cli(capsys, "stats", "a.b", "--metastore", uri, "--user", "alice", "--password-file",
                       str(servers.password_file)), "accepts TLS connections only", "--tls-ca")
    one_line_error(cli(capsys, "list-files", "a.b", "--metastore", uri), "accepts TLS connections only")
    one_line_error(cli(capsys, "stats", "a.b", "--metastore", uri, "--tls", *login[2:]), "is not trusted",
                   "--tls-ca FILE")
    one_line_error(cli(capsys, "stats", "a.b", "--metastore", uri, "--auth", "password", *tls),
                   "--auth password needs the password", "--password-file")
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    one_line_error(cli(capsys, "import-hudi", base, "--table", "a.b", "--metastore", uri, *tls),
                   "requires authentication")
    one_line_error(cli(capsys, "migrate", "--from", servers.uris["plain"], "--metastore", uri, "--quiet", *tls),
                   "requires authentication")
    tls_uri, _ = using("tls")
    one_line_error(cli(capsys, "stats", "a.b", "--metastore", tls_uri, *tls), "refused the TLS connection",
                   "wants a client certificate", "--tls-client-cert")
    password_uri, _ = using("password")
    one_line_error(cli(capsys, "stats", "a.b", "--metastore", password_uri), "requires authentication")
    if servers.kdc is not None:
        kerberos_uri, _ = using("kerberos")
        os.environ["KRB5CCNAME"] = f"FILE:{tmp_path / 'no-ticket-cache'}"  # (using's monkeypatch restores it)
        one_line_error(cli(capsys, "stats", "a.b", "--metastore", kerberos_uri, "--auth", "kerberos"),
                       "No Kerberos credentials available", "kinit")
    log = open(servers.procs["tls+password"].log_path).read()
    assert log.count("wrong user name or password") == 1  # no retries of a refused log-in


@pytest.mark.spark
@pytest.mark.slow
def test_pipeline_writes_with_each_mechanism(servers, using, spark):
    """One write and its read back per mechanism; with Kerberos, the tasks log in with the
    delegation token the driver got for the write (and cancelled after it)."""
    from pipeline import read, write

    df = spark.createDataFrame([(1, "a", 10), (2, "b", 20)], "id long, name string, ts long")
    checked = []
    for mechanism in MECHANISMS:
        if mechanism == "kerberos" and servers.kdc is None:
            continue
        uri, _ = using(mechanism)
        security = servers.security(mechanism)
        table = f"pipe_{uuid.uuid4().hex[:6]}.t"
        write(df, table, "upsert", record_key="id", precombine_field="ts", metastore=uri, security=security)
        rows = sorted((r.id, r.name) for r in read(spark, table, metastore=uri, security=security).collect())
        assert rows == [(1, "a"), (2, "b")], mechanism
        checked.append(mechanism)
    if servers.kdc is not None:
        log = open(servers.procs["kerberos"].log_path).read()
        assert f"authenticated as {servers.user} (token)" in log and "call=add_markers" in log
        assert "call=cancel_delegation_token" in log
    assert len(checked) >= 3


def test_a_refusal_still_waiting_is_read_after_a_failed_send(servers, using):
    """TLS 1.3 refuses a client without a certificate after its handshake; when this side's send
    fails first (the server's close can reset it), the refusal still waiting is read and named."""
    import time

    from client import HudiMetastoreClient, Security

    uri, _ = using("tls")
    conn = HudiMetastoreClient(uri, security=Security(tls_ca=str(servers.cert)), retries=0)
    try:
        conn._connection()  # this side's handshake is done; the server checks the certificate next
        time.sleep(0.5)
        refused = conn._pending_tls_alert()
        assert refused is not None and "wants a client certificate" in refused, refused
    finally:
        conn.close()
