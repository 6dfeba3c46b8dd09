"""`hudi-metastore users add --file FILE USER`: add a user to serve's --auth-password-file (or
change its password). The password is read from standard input (first line), never from the
command line; on a terminal it is asked for twice."""

from __future__ import annotations

import getpass
import sys

from adapter.preflight import CommandError
from adapter.security import password_file


def add_user(args) -> int:
    password = _read_password()
    try:
        new = password_file.set_password(args.file, args.user, password)
    except (password_file.PasswordFileError, OSError) as exc:
        raise CommandError(str(exc)) from None
    print(f"{'added' if new else 'changed the password of'} {args.user} in {args.file}")
    return 0


def _read_password() -> str:
    if sys.stdin.isatty():
        first = getpass.getpass("password: ")
        if getpass.getpass("again: ") != first:
            raise CommandError("the passwords differ")
        return first
    return sys.stdin.readline().rstrip("\r\n")
