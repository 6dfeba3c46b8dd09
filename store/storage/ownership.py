"""Storage ownership (docs/security.md, "Storage ownership"): every location belongs to at most one
object, and what the server deletes or moves for an object is only what lies under that object's
own location and no other object's location covers.

This module holds the parts that need no database: locations in normalized form (`location_key`),
who is asking (`Claimant`, set per call by adapter/authorization.py; none with authorization off or
for the server's own work), the report of refusals and deletions (the audit log registers itself,
`set_reporter`), and deleting a directory around the locations of other objects inside it
(`delete_around`, `empty_around`). The index of which object owns which location, and the rules, are
store/storage/owner_index.py.

A location's key: the scheme lower-cased, with its aliases (`s3`, `s3n` -> `s3a`; `gcs` -> `gs`;
`abfss` -> `abfs`; `wasbs` -> `wasb`); for local paths (`/x`, `file:/x`, `file:///x`, `file://host/x`:
the server opens all of them as the local path `/x`) the absolute path with symbolic links, `.` and
`..` resolved as the operating system resolves them; for URLs the host lower-cased and the path's
`.`, `..` and duplicate slashes resolved as Hadoop's Path does. Each path segment's %-escapes are
decoded unless that would make a separator, `.` or `..` (a directory named `a%2Fb` is not `a/b`).
Keys end with `/`, so `k1.startswith(k2)` says "k1 lies inside k2 or is k2".
"""

from __future__ import annotations

import logging
import os
import posixpath
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from store.storage import warehouse

log = logging.getLogger(__name__)

SCHEME_ALIASES = {"s3": "s3a", "s3n": "s3a", "gcs": "gs", "abfss": "abfs", "wasbs": "wasb"}


# --- keys ----------------------------------------------------------------------------------------


def _decoded(segment: str) -> str:
    text = unquote(segment) if "%" in segment else segment
    return segment if "/" in text or text in ("", ".", "..") else text


def _segments_decoded(path: str) -> str:
    return "/".join(_decoded(s) if s else s for s in path.split("/"))


def _local(path: str, resolve: bool) -> str:
    path = os.path.realpath(path) if resolve else os.path.normpath(os.path.abspath(path))
    if path.startswith("//"):  # POSIX keeps a leading '//'; the file system does not care
        path = "/" + path.lstrip("/")
    path = _segments_decoded(path)
    return "file:" + (path.rstrip("/") + "/")


def location_key(uri: str | None, resolve: bool = True) -> str | None:
    """The normalized form of a location (see above); None for none. `resolve`: resolve symbolic
    links of local paths (what exists of them)."""
    if not uri:
        return None
    path = warehouse.local_path(uri)
    if path is not None:
        return _local(path, resolve)
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    scheme = SCHEME_ALIASES.get(scheme, scheme)
    norm = posixpath.normpath("/" + parts.path) if parts.path else "/"
    norm = "/" + norm.lstrip("/")
    norm = _segments_decoded(norm)
    return f"{scheme}://{parts.netloc.lower()}{norm.rstrip('/')}/"


def location_keys(uris: Iterable[str], real_of: warehouse.RealPaths | None = None) -> list[str | None]:
    """location_key of many locations, the real path of each directory on their way looked up once
    (warehouse.RealPaths: a partition drop's thousands share their table's; `real_of`: the
    request's)."""
    real_of = real_of or warehouse.RealPaths()
    out: list[str | None] = []
    for uri in uris:
        path = warehouse.local_path(uri) if uri else None
        if path is None or not os.path.isabs(path) or ".." in path.split("/"):
            out.append(location_key(uri))
            continue
        out.append(_local(real_of(os.path.normpath(path)), False))
    return out


def key_of_local_path(path: str) -> str:
    """The key of a local path the server found on disk (no links to resolve below a resolved root)."""
    return _local(path, False)


def leaves_its_parent(relative: str) -> bool:
    """Would the relative path `relative` (a database's directory name) name something else than a
    directory below its parent: an empty, `.` or `..` segment (`a/../../b.db`)?"""
    return any(s in ("", ".", "..") for s in relative.replace("\\", "/").split("/"))


def ancestors(key: str) -> list[str]:
    """`key` and every directory above it, as keys (longest first)."""
    if key.startswith("file:"):
        head, path = "file:", key[len("file:"):]
    else:
        scheme, _, rest = key.partition("://")
        host, _, path = rest.partition("/")
        head, path = f"{scheme}://{host}", "/" + path
    out = []
    while True:
        out.append(head + path)
        if path == "/":
            return out
        path = path[:path.rstrip("/").rfind("/") + 1]


def within(key: str, other: str) -> bool:
    """Does `key` lie inside `other`, or is it `other`?"""
    return key.startswith(other)


# --- who asks ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claimant:
    """The caller of a call that may name locations, as authorization sees it (adapter/authorization.py)."""

    user: str
    admin: bool
    owns: Callable[[str | None, int | None], bool]  # is an owner (name, principal type) the caller's?

    def label(self) -> str:
        return f"user {self.user}"


_local_state = threading.local()  # one thread per connection: the caller of this thread's call


def set_claimant(claimant: Claimant | None) -> None:
    """Authorization (adapter/authorization.py) names the caller of each call it admits; None: the
    location rules are not checked (authorization off, or the server's own work)."""
    _local_state.claimant = claimant


def claimant() -> Claimant | None:
    return getattr(_local_state, "claimant", None)


# --- what is reported ----------------------------------------------------------------------------

# (action, path, outcome, detail): action `claim`, `delete`, `empty`, `move`; outcome `ok`, `denied`,
# `skipped`
Reporter = Callable[[str, str, str, str | None], None]
_reporters: list[Reporter] = []


def set_reporter(reporter: Reporter) -> None:
    """The audit log (adapter/audit_log.py) receives every refusal and deletion (once per process)."""
    if reporter not in _reporters:
        _reporters.append(reporter)


def report(action: str, path: str, outcome: str, detail: str | None = None) -> None:
    if outcome != "ok":
        log.warning("storage %s of %s %s%s", action, path, outcome, f": {detail}" if detail else "")
    for r in _reporters:
        try:
            r(action, path, outcome, detail)
        except Exception:  # noqa: BLE001 - a report never fails the call
            log.exception("could not report storage %s of %s", action, path)


# --- deleting around what others own --------------------------------------------------------------


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _clear_local(path: str, keep: set[str], keep_root: bool) -> None:
    """Delete what is under `path` but the entries whose key is in `keep` and the directories on the
    way to them; then `path` itself when it is empty and not `keep_root`."""
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        return
    for entry in entries:
        k = key_of_local_path(entry.path)
        if k in keep:
            continue
        if entry.is_dir(follow_symlinks=False) and any(p.startswith(k) for p in keep):
            _clear_local(entry.path, keep, keep_root=False)
        else:
            _remove(entry.path)
    if not keep_root:
        try:
            os.rmdir(path)  # only when empty
        except OSError:
            pass


def _clear_fs(uri: str, keep: set[str], keep_root: bool) -> None:
    """_clear_local on a file system the server opens through fsspec."""
    fs_path = warehouse._fs_or_none(uri, "delete")  # noqa: SLF001 - the module's own opener
    if not fs_path:
        return
    fs, root = fs_path
    scheme = urlsplit(uri).scheme

    def clear(path: str, keep_this: bool) -> None:
        try:
            entries = fs.ls(path, detail=True)
        except FileNotFoundError:
            return
        for e in entries:
            name = e["name"]
            k = location_key(f"{scheme}://{name}", resolve=False) or ""
            if k in keep:
                continue
            if e.get("type") == "directory" and any(p.startswith(k) for p in keep):
                clear(name, False)
            else:
                fs.rm(name, recursive=True)
        if not keep_this:
            try:
                if not fs.ls(path):
                    fs.rm(path, recursive=True)
            except (FileNotFoundError, OSError):
                pass

    clear(root, keep_root)


def delete_around(uri: str, keep: Iterable[str]) -> None:
    """Delete the directory `uri` but the locations `keep` (keys inside it) and the directories on
    the way to them. Never raises (as warehouse.delete_dir)."""
    keep = set(keep)
    try:
        path = warehouse.local_path(uri)
        if path is not None:
            if os.path.islink(path) or not os.path.isdir(path):
                return
            _clear_local(os.path.realpath(path), keep, keep_root=False)
        else:
            _clear_fs(uri, keep, keep_root=False)
    except Exception as exc:  # noqa: BLE001 - as warehouse.delete_dir
        warehouse._failed("delete", uri, exc)  # noqa: SLF001


def empty_around(uri: str, keep: Iterable[str]) -> None:
    """Empty the directory `uri` (truncate) but the locations `keep` inside it."""
    keep = set(keep)
    path = warehouse.local_path(uri)
    if path is not None:
        if os.path.isdir(path):
            _clear_local(os.path.realpath(path), keep, keep_root=True)
        return
    _clear_fs(uri, keep, keep_root=True)


__all__ = ["Claimant", "ancestors", "claimant", "delete_around", "empty_around", "key_of_local_path",
           "leaves_its_parent", "location_key", "location_keys", "report", "set_claimant", "set_reporter", "within"]
