"""A real MIT Kerberos KDC for the tests: its own realm, database and config in a temporary
directory, listening on a free loopback port (TCP and UDP), started with `krb5kdc -n`.

Processes that use it get `KRB5_CONFIG` (MIT's libraries and tools) or `-Djava.security.krb5.conf`
(Java) pointing at `krb5.conf`. Needs Debian's krb5-kdc, krb5-admin-server and krb5-user
(.ci/services.sh installs them).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

REALM = "HMS.TEST"
SERVICE_HOST = "localhost"  # clients connect to thrift://localhost:PORT; the service is hive/localhost
MISSING = [t for t in ("krb5kdc", "kdb5_util", "kadmin.local", "kinit")
           if not shutil.which(t) and not os.path.exists(f"/usr/sbin/{t}")]


def _tool(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def _free_port() -> int:
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port for the KDC")


class Kdc:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.krb5_conf = self.root / "krb5.conf"
        self.proc: subprocess.Popen | None = None

    @property
    def env(self) -> dict[str, str]:
        """Environment for MIT's tools and libraries (the server, kinit, Python clients)."""
        return {**os.environ, "KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.root / "kdc.conf"),
                "KRB5CCNAME": f"FILE:{self.root / 'ccache-default'}", "KRB5RCACHEDIR": str(self.root)}

    def start(self) -> Kdc:
        r = self.root
        (r / "kdc.conf").write_text(f"""[kdcdefaults]
 kdc_listen = 127.0.0.1:{self.port}
 kdc_tcp_listen = 127.0.0.1:{self.port}
[realms]
 {REALM} = {{
  database_name = {r}/principal
  key_stash_file = {r}/stash
  acl_file = {r}/kadm5.acl
  max_life = 10h
  max_renewable_life = 1d
  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
 }}
[logging]
 kdc = FILE:{r}/kdc.log
""")
        self.krb5_conf.write_text(f"""[libdefaults]
 default_realm = {REALM}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 dns_canonicalize_hostname = false
 rdns = false
 udp_preference_limit = 1
 ticket_lifetime = 10h
 forwardable = true
 permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
 {REALM} = {{
  kdc = 127.0.0.1:{self.port}
 }}
[domain_realm]
 localhost = {REALM}
 .localhost = {REALM}
""")
        (r / "kadm5.acl").write_text("")
        subprocess.run([_tool("kdb5_util"), "create", "-s", "-r", REALM, "-P", "master-key-of-the-test-kdc"],
                       env=self.env, check=True, capture_output=True)
        log = open(r / "krb5kdc.out", "wb")
        self.proc = subprocess.Popen([_tool("krb5kdc"), "-n", "-r", REALM], env=self.env, stdout=log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"krb5kdc exited: {(r / 'krb5kdc.out').read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("krb5kdc did not listen within 20 s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def kadmin(self, query: str) -> str:
        out = subprocess.run([_tool("kadmin.local"), "-r", REALM, "-q", query], env=self.env,
                             capture_output=True, text=True, check=True)
        if "error" in out.stderr.lower() or "error" in out.stdout.lower():
            raise RuntimeError(f"kadmin.local {query}: {out.stdout} {out.stderr}")
        return out.stdout

    def add_user(self, name: str, password: str) -> str:
        self.kadmin(f"addprinc -pw {password} {name}")
        return f"{name}@{REALM}"

    def add_keytab(self, name: str, keytab: Path | None = None) -> tuple[str, Path]:
        """A principal (created if new) with a new random key, exported to a keytab: (principal, keytab)."""
        keytab = keytab or self.root / (name.replace("/", "_") + f"-{time.monotonic_ns()}.keytab")
        if f"{name}@{REALM}" not in self.kadmin("listprincs"):
            self.kadmin(f"addprinc -randkey {name}")
        self.kadmin(f"ktadd -k {keytab} {name}")  # a new random key: keytabs exported before go stale
        return f"{name}@{REALM}", keytab

    def kinit(self, principal: str, password: str | None = None, keytab: Path | None = None,
              lifetime: str | None = None) -> dict[str, str]:
        """A ticket cache of its own for `principal`; returns the environment that uses it."""
        cache = self.root / f"ccache-{principal.split('@')[0].replace('/', '_')}-{time.monotonic_ns()}"
        env = {**self.env, "KRB5CCNAME": f"FILE:{cache}"}
        cmd = [_tool("kinit")] + (["-l", lifetime] if lifetime else [])
        cmd += ["-k", "-t", str(keytab), principal] if keytab else [principal]
        subprocess.run(cmd, env=env, input=(password + "\n") if password else None, text=True,
                       check=True, capture_output=True)
        return env
