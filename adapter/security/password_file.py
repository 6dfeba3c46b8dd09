"""The password file of `--auth password`: one `user:pbkdf2-sha256$iterations$salt$hash` line per
user (salt and hash in base64), as written by `hudi-metastore users add`."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import tempfile

SCHEME = "pbkdf2-sha256"
ITERATIONS = 200_000
USER_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,128}$")


class PasswordFileError(ValueError):
    pass


def hash_password(password: str, iterations: int = ITERATIONS) -> str:
    salt = os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    return f"{SCHEME}${iterations}${_b64(salt)}${_b64(digest)}"


def matches(stored: str, password: str) -> bool:
    try:
        scheme, iterations, salt, digest = stored.split("$")
        if scheme != SCHEME:
            return False
        computed = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(salt), int(iterations))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(computed, base64.b64decode(digest))


def read(path: str) -> dict[str, str]:
    """user -> stored hash; a malformed line is an error naming its number."""
    users: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return users
    except OSError as exc:
        raise PasswordFileError(f"cannot read the password file {path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        user, sep, stored = line.partition(":")
        if not sep or not USER_NAME.match(user) or stored.count("$") != 3:
            raise PasswordFileError(f"{path}, line {number}: expected user:{SCHEME}$iterations$salt$hash")
        users[user] = stored
    return users


def verify(path: str, user: str, password: str) -> bool:
    stored = read(path).get(user)
    if stored is None:  # the same work as for a known user: the time does not tell who exists
        hashlib.pbkdf2_hmac("sha256", password.encode(), b"\0" * 16, ITERATIONS)
        return False
    return matches(stored, password)


def set_password(path: str, user: str, password: str) -> bool:
    """Add `user` or replace its password (the file is replaced atomically, mode 0600); True when
    the user was new."""
    if not USER_NAME.match(user):
        raise PasswordFileError(f"invalid user name {user!r}: letters, digits and _ . @ - only")
    if not password:
        raise PasswordFileError("the password is empty")
    users = read(path)
    new = user not in users
    users[user] = hash_password(password)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".passwords-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.writelines(f"{name}:{stored}\n" for name, stored in sorted(users.items()))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return new


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
