"""What the Hudi table commands (import-hudi, validate, repair, stats, list-partitions, list-files)
share: the DB.TABLE argument, the --metastore option, the connection and how errors are reported."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from adapter.commands.parsers import DEFAULT_METASTORE, PASSWORD_ENV
from client import AuthenticationError, HudiCatalog, MetastoreError, NotFound, Security

__all__ = ["DEFAULT_METASTORE", "BadArgument", "split_table", "connect", "reporting_errors", "require_hudi_table",
           "security_of", "login_hint", "confirmed"]


class BadArgument(ValueError):
    """Input a command refuses (the message says what); nothing was changed."""


def split_table(text: str) -> tuple[str, str]:
    db, _, tbl = (text or "").partition(".")
    if not db or not tbl or "." in tbl:
        raise BadArgument(f"expected <db>.<table>, got {text!r}")
    return db, tbl


def security_of(args) -> Security:
    """How a command logs in to --metastore: its --auth, --user, --password-file (or the password
    in HUDI_METASTORE_PASSWORD), --kerberos-principal and --tls* options (each also from the config
    file and the environment, adapter/config.py). BadArgument when they do not fit together."""
    password, where = None, ""
    if getattr(args, "password_file", None):
        try:
            with open(args.password_file, encoding="utf-8") as f:
                password = f.read().rstrip("\r\n")
        except OSError as exc:
            raise BadArgument(f"password file {args.password_file}: {exc.strerror or exc}") from None
        where = f"--password-file {args.password_file}"
    if os.environ.get(PASSWORD_ENV) is not None:
        if password is not None:
            raise BadArgument(f"the password is given twice ({PASSWORD_ENV} and {where}): keep one")
        password = os.environ[PASSWORD_ENV]
    auth = getattr(args, "auth", None) or ("password" if password is not None else "none")
    if auth == "password" and password is None:
        raise BadArgument(f"--auth password needs the password: --password-file FILE or {PASSWORD_ENV}")
    if auth != "password" and getattr(args, "user", None):
        raise BadArgument(f"--user is the user of --auth password (this command logs in with: {auth}; "
                          "Kerberos takes the user from the ticket cache)")
    cert, key = getattr(args, "tls_client_cert", None), getattr(args, "tls_client_key", None)
    if bool(cert) != bool(key):
        raise BadArgument("a TLS client certificate needs both --tls-client-cert and --tls-client-key")
    for path in (getattr(args, "tls_ca", None), cert, key):
        if path and not os.access(path, os.R_OK):
            raise BadArgument(f"cannot read {path}")
    return Security(auth=auth, user=getattr(args, "user", None), password=password if auth == "password" else None,
                    kerberos_principal=getattr(args, "kerberos_principal", None) or "hive/_HOST",
                    tls=bool(getattr(args, "tls", False)), tls_ca=getattr(args, "tls_ca", None),
                    tls_cert=cert, tls_key=key)


def connect(args, **options) -> HudiCatalog:
    """A catalog on args.metastore, logged in as the options say; a server that does not answer is
    reported at once (no retries of the first connection)."""
    return HudiCatalog(args.metastore, security=security_of(args), connect_retries=0, **options)



def require_hudi_table(client: HudiCatalog, db: str, tbl: str) -> None:
    """BadArgument when db.table is a table of the metastore but not a Hudi one (the server's own
    answer, NotFound, says so only for a table that does not exist at all)."""
    try:
        client.get_hudi_table(db, tbl)
    except NotFound as missing:
        try:
            t = client.get_table(db, tbl)
        except NotFound:
            raise missing from None
        raise BadArgument(f"{t.db}.{t.name} is not a Hudi table ({t.table_type or 'a table'} without a "
                          "Hudi timeline on the metastore; `import-hudi` adopts one from storage)") from None


def confirmed(name: str, question: str, yes: bool) -> bool:
    """True when the user agreed (or gave --yes); False, after saying so, when the answer was no.
    BadArgument without a terminal to ask on (a script must pass --yes)."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise BadArgument("not confirmed (no terminal); pass --yes to run it from a script")
    if input(f"{question} [y/N] ").strip().lower() in ("y", "yes"):
        return True
    print(f"{name}: cancelled; nothing changed")
    return False


def login_hint(exc: AuthenticationError) -> str:
    """The client's message with what to give this CLI instead of the Python client's settings."""
    text = exc.message
    if exc.needs == "authentication":
        text = text.split(" (security=")[0] + ": give --user NAME --password-file FILE (serve --auth password) " \
               "or --auth kerberos after kinit (serve --auth kerberos)"
    elif exc.needs == "tls":
        text = text.split(" (security=")[0] + ": give --tls-ca FILE (the server's CA) or --tls"
    return text.replace("(give its CA: tls_ca)", "(give its CA: --tls-ca FILE)").replace(
        "(tls_cert, tls_key)", "(--tls-client-cert FILE --tls-client-key FILE)")


def reporting_errors(name: str, metastore: str, fn: Callable[[], int]) -> int:
    """fn()'s exit status; bad input and metastore errors are printed on stderr (exit status 2)."""
    try:
        return fn()
    except ValueError as exc:  # BadArgument, HudiImportError, or e.g. not a thrift:// URI
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except AuthenticationError as exc:
        print(f"{name}: {login_hint(exc)}", file=sys.stderr)
        return 2
    except NotFound as exc:
        print(f"{name}: {exc.message} (metastore {metastore})", file=sys.stderr)
        return 2
    except (MetastoreError, OSError) as exc:
        text = str(getattr(exc, "message", None) or exc)
        print(f"{name}: {text if metastore in text else f'metastore {metastore}: {text}'}", file=sys.stderr)
        return 2
