"""What the server may delete, move or empty on storage: what is under the warehouse, under a root an
admin configured (`--storage-roots`), or under a directory the server made itself (recorded in
`created_locations` when it made it). Everything else a client names (a MANAGED table's location
outside the warehouse, a database location on someone's home directory) is recorded and left
alone: dropping its object drops the metadata only, and the skipped directory is logged.

Paths are compared in canonical form: local paths resolved (symbolic links and `..` included), so a
link inside the warehouse that points out of it is outside; URLs by scheme, host and normalised path.
"""

from __future__ import annotations

import hashlib
import logging
import os
import posixpath
import subprocess
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from sqlalchemy import Connection, select
from sqlalchemy.exc import IntegrityError

from store import metrics
from store.db import schema as S
from store.db.database import Store, now_ms
from store.db.dialect import BATCH
from store.errors import MetaError, OwnershipConflict
from store.storage import ownership, warehouse
from store.storage.owner_index import OwnerIndex

if TYPE_CHECKING:
    from store.storage.folder_stats import FolderCounter

log = logging.getLogger(__name__)
REFUSED = "hms_storage_refused"


def canonical(uri: str, realpath: Callable[[str], str] = os.path.realpath) -> str:
    """`file:` + the resolved absolute path for local paths; `scheme://host/normalised/path` else.
    `realpath`: a warehouse.RealPaths for many locations at once."""
    path = warehouse.local_path(uri)
    if path is not None:
        return "file:" + realpath(path)
    parts = urlsplit(uri)
    norm = posixpath.normpath("/" + parts.path.lstrip("/")) if parts.path else "/"
    return f"{parts.scheme.lower()}://{parts.netloc}{norm}".rstrip("/") or "/"


def _lexical(uri: str) -> str:
    """canonical without resolving symbolic links (cheap)."""
    path = warehouse.local_path(uri)
    if path is not None:
        return "file:" + os.path.normpath(os.path.abspath(path))
    return canonical(uri)


def _ancestors(c: str) -> list[str]:
    """`c` and every directory above it, in canonical form."""
    scheme, sep, rest = c.partition("://") if "://" in c else ("file", ":", c[len("file:"):])
    head = f"{scheme}{sep}"
    out = []
    path = rest
    while True:
        out.append(head + path)
        parent = path.rsplit("/", 1)[0]
        if not parent or parent == path:
            break
        path = parent
    return out


def _under(c: str, root: str) -> bool:
    return c == root or c.startswith(root.rstrip("/") + "/")


def _hash(c: str) -> str:
    return hashlib.sha256(c.encode("utf-8")).hexdigest()


def _make_dirs(wanted: list[str]) -> list[str]:
    """Make the directories; those that did not exist before."""
    if len(wanted) < 32:
        return [u for u in wanted if warehouse.make_dirs(u)]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="make-dir") as pool:
        return [u for u, new in zip(wanted, pool.map(warehouse.make_dirs, wanted)) if new]


class DirsInProgress:
    """Directories being made in the background (StorageBoundary.start_dirs): local ones by `mkdir
    -p` in a child process (threads making thousands would take the interpreter's lock from the
    caller's transaction at every system call), others by a thread."""

    _ARGS = 1000  # paths per mkdir process

    def __init__(self, uris: list[str]):
        self._made: list[str] = []
        self._result: list[str] | None = None
        self._missing: list[tuple[str, str]] = []  # (uri, local path) of local ones that did not exist
        self._procs: list[subprocess.Popen[bytes]] = []
        others = []
        for u in uris:
            path = warehouse.local_path(u)
            if path is None:
                others.append(u)
            elif not os.path.isdir(path):
                self._missing.append((u, path))
        try:
            for i in range(0, len(self._missing), self._ARGS):
                paths = [p for _, p in self._missing[i:i + self._ARGS]]
                self._procs.append(subprocess.Popen(["mkdir", "-p", "--", *paths], stdin=subprocess.DEVNULL,
                                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        except OSError:  # no mkdir program: made one by one when waited for
            pass
        self._thread = threading.Thread(target=self._run, args=(others,), name="make-dirs", daemon=True)
        self._thread.start()

    def _run(self, uris: list[str]) -> None:
        try:
            self._made = _make_dirs(uris)
        except Exception:  # noqa: BLE001 - make_dirs never raises; nothing made is known then
            log.exception("making directories failed")

    def missing(self) -> list[str]:
        """The local directories that did not exist when started (those being made), at once."""
        return [u for u, _ in self._missing]

    def wait(self) -> list[str]:
        """The directories made that did not exist before (once they are)."""
        if self._result is None:
            codes = [proc.wait() for proc in self._procs]
            self._thread.join()
            made = list(self._made)
            if self._procs and len(codes) * self._ARGS >= len(self._missing) and not any(codes):
                made.extend(u for u, _ in self._missing)  # mkdir -p succeeds only if all are directories
            else:
                for u, path in self._missing:  # what mkdir could not make is tried once more, and counted
                    if os.path.isdir(path) or warehouse.make_dirs(u):
                        made.append(u)
            self._result = made
        return self._result


class StorageBoundary:
    def __init__(self, store: Store, roots: Iterable[str] = (), confined: bool = True,
                 external_locations: Iterable[str] = ()):
        self.store = store
        # who owns which location (store/storage/owner_index.py): deletions and moves follow it
        external_locations = list(external_locations)
        self.owners = OwnerIndex(store, external_locations)
        self.confined = confined  # False: Hudi base paths are all writable (an admin's own command)
        self.roots = [canonical(r) for r in [store.warehouse, *roots] if r]
        self.lexical_roots = [_lexical(r) for r in [store.warehouse, *roots] if r]
        # where the server may list folders a client names (their statistics: folder_stats.py): the
        # boundary and the external locations, where users may place objects
        self.listing_roots: list[str] = list(self.roots) + [canonical(r) for r in external_locations if r]
        self._warned: set[tuple[str | None, str]] = set()  # bounded by the tables there are

    # --- what the server made ----------------------------------------------------------------------

    def make_dirs(self, uris: Iterable[str | None], conn: Connection | None = None, top: bool = False) -> None:
        """Make the directories (many at once: each waits on the file system's journal, not on the
        CPU); record the ones that did not exist and no root covers (the server may delete those),
        in `conn`'s transaction when the caller's is still open (another connection would wait on
        its lock on SQLite). `top`: those made hold separate hierarchies (a database's tables,
        a partitioned table's partitions), marked so (warehouse.mark_top)."""
        made = _make_dirs([u for u in uris if u])
        if top:
            for u in made:
                path = warehouse.local_path(u)
                if path is not None:
                    warehouse.mark_top(path)
        self.note_made(made, conn)

    def start_dirs(self, uris: Iterable[str | None]) -> DirsInProgress:
        """Make the directories in the background (while the caller's transaction runs); the caller
        then passes what `DirsInProgress.wait` made to `note_made` or, when its change failed, to
        `unmake_dirs`."""
        return DirsInProgress([u for u in uris if u])

    def note_made(self, made: list[str], conn: Connection | None = None) -> None:
        """Record the directories the server made that no root covers (see make_dirs)."""
        # a lexical check first (no symbolic links resolved): what it puts under a root needs no
        # record; deletions resolve links, so a link out of the warehouse is still outside then
        made = [u for u in made if not any(_under(_lexical(u), r) for r in self.lexical_roots)]
        if made:
            self._record([c for c, ok in zip(map(canonical, made), self._allowed(made)) if not ok], conn)

    def unmake_dirs(self, made: list[str], depth: int, within: str | None) -> None:
        """Delete the directories made for a change that failed, when still empty, and the empty
        parents it left up to `depth` levels inside `within` (never fails the call)."""
        gone = [u for u in made if warehouse.delete_empty_dir(u)]
        self.delete_empty_parents(gone, depth, within)

    def _record(self, canon: list[str], conn: Connection | None = None) -> None:
        if not canon:
            return
        rows = [{"loc_hash": _hash(c), "location": c, "create_time": now_ms()} for c in dict.fromkeys(canon)]
        joined = conn if conn is not None else self.store.joined()
        if joined is not None:  # inside one transaction (a Hudi catch-up with its call): recorded with it
            have = set(joined.execute(select(S.created_locations.c.loc_hash).where(
                S.created_locations.c.loc_hash.in_([r["loc_hash"] for r in rows]))).scalars())
            if [r for r in rows if r["loc_hash"] not in have]:
                joined.execute(S.created_locations.insert(), [r for r in rows if r["loc_hash"] not in have])
            return
        try:
            with self.store.engine.begin() as conn:
                conn.execute(S.created_locations.insert(), rows)
        except IntegrityError:  # made again after a drop: one by one, keeping the rows there are
            for row in rows:
                try:
                    with self.store.engine.begin() as conn:
                        conn.execute(S.created_locations.insert(), [row])
                except IntegrityError:
                    pass
        except Exception as exc:  # noqa: BLE001 - never fails the call (the directory stays undeletable)
            log.warning("could not record directories the server made: %s", exc)

    # --- what the server may change ----------------------------------------------------------------

    def _allowed(self, uris: list[str], real: warehouse.RealPaths | None = None) -> list[bool]:
        real = real or warehouse.RealPaths()
        canon = [canonical(u, real) for u in uris]
        out = [any(_under(c, r) for r in self.roots) for c in canon]
        pending = {i: _ancestors(c) for i, c in enumerate(canon) if not out[i]}
        if pending:
            hashes = sorted({_hash(a) for anc in pending.values() for a in anc})
            known: set[str] = set()
            with self.store.read() as conn:
                for start in range(0, len(hashes), BATCH):
                    known.update(conn.execute(select(S.created_locations.c.loc_hash).where(
                        S.created_locations.c.loc_hash.in_(hashes[start:start + BATCH]))).scalars())
            for i, anc in pending.items():
                out[i] = any(_hash(a) in known for a in anc)
        return out

    def allowed(self, uris: Iterable[str | None], action: str, real: warehouse.RealPaths | None = None) -> list[str]:
        """The `uris` the server may `action` (delete, move, empty); the others logged and counted.
        `real`: the request's RealPaths (one drop's steps look at the same directories)."""
        given = [u for u in uris if u]
        if not given:
            return []
        ok = self._allowed(given, real)
        for u, good in zip(given, ok):
            if not good:
                metrics.incr(REFUSED)
                log.warning("not %s %s: outside the warehouse, the storage roots and the directories the "
                            "server made (docs/security.md, Storage boundaries)", action, u)
        return [u for u, good in zip(given, ok) if good]

    def may(self, uri: str | None) -> bool:
        return bool(uri) and self._allowed([uri or ""])[0]

    def writable(self, base_path: str | None, action: str, tbl_id: int | None = None) -> bool:
        """May the server `action` (write, delete) files under a Hudi table's base path? Logged
        (once per base path and action) and counted when not. With `tbl_id` (the table's), also not
        when another object's location covers the base path (its merge-on-read views `<t>_ro`/`<t>_rt`
        are the table's own; docs/security.md, Storage ownership)."""
        if tbl_id is not None and base_path:
            plan = self.owners.plan([base_path], tbl_id, views=True)
            if plan and plan[0].covered:
                metrics.incr(REFUSED)
                ownership.report(action.split()[0], base_path, "skipped", f"covered by {plan[0].covered}")
                return False
        if not self.confined or self.may(base_path):
            return True
        metrics.incr(REFUSED)
        if (base_path, action) not in self._warned:
            self._warned.add((base_path, action))
            log.warning("not %s %s: outside the warehouse, the storage roots and the directories the server "
                        "made (docs/security.md, Storage boundaries)", action, base_path)
        return False

    def folder_counter(self) -> FolderCounter:
        """Counts the folders of one request (statistics), bounded: with authorization on (a caller
        whose locations are checked) only within the listing roots, so that no user learns what
        another's folders hold; with it off, wherever the client's location is, as Hive does (every
        caller may do everything there anyway)."""
        from store.storage.folder_stats import FolderCounter

        return FolderCounter(self.listing_roots if ownership.claimant() is not None else None)

    # --- what ownership lets the server change ------------------------------------------------------

    def delete_partition_dirs(self, uris: list[str], tbl_id: int, depth: int, within: str | None) -> None:
        """After partitions of table `tbl_id` were dropped: their directories as delete_dirs deletes
        them, and the parents they leave empty as delete_empty_parents does, each directory's real
        path looked up once for all of it. Each partition's directory and then its parents are
        removed in one go, several partitions at a time (a parent shared by partitions being
        removed at once goes with the last of them: each tries it after its own directory)."""
        real = warehouse.RealPaths()
        self._delete_with_parents(uris, self._plain_deletions(uris, tbl_id, real), depth, within, real)

    def _delete_with_parents(self, uris: list[str], whole: list[str], depth: int, within: str | None,
                             real: warehouse.RealPaths) -> None:
        """Delete the directories `whole` (of `uris`), then the parents of `uris` while they are
        empty (_parent_chains), each directory with its parents in one go, several at a time."""
        chains = self._parent_chains(uris, depth, within, real)
        deleted = set(whole)
        gone = warehouse.delete_chains([(u if u in deleted else None, chains.get(u, [])) for u in dict.fromkeys(uris)])
        for u in whole:
            ownership.report("delete", u, "ok")
        for u in sorted({p for parents in gone for p in parents}):
            ownership.report("delete", u, "ok", "emptied by dropped partitions")

    def _parent_chains(self, uris: Sequence[str], depth: int, within: str | None,
                       real: warehouse.RealPaths) -> dict[str, list[str]]:
        """For each of `uris`: its parents that may be deleted once empty, nearest first (up to
        `depth`, inside `within` and the boundary; a chain ends at the first that is not)."""
        if depth <= 0 or not within:
            return {}
        top = canonical(within, real).rstrip("/") + "/"
        levels: list[set[str]] = []
        level = {u for u in uris if u}
        for _ in range(depth):
            level = {u.rstrip("/").rsplit("/", 1)[0] for u in level if "/" in u.rstrip("/")}
            level = {u for u in level if canonical(u, real).startswith(top)}
            level = set(self.allowed(sorted(level), "delete", real))
            if not level:
                break
            levels.append(level)
        chains: dict[str, list[str]] = {}
        for u in uris:
            chain, at = [], u
            for ok in levels:
                at = at.rstrip("/").rsplit("/", 1)[0] if at and "/" in at.rstrip("/") else ""
                if at not in ok:
                    break
                chain.append(at)
            if chain:
                chains[u] = chain
        return chains

    def delete_dirs(self, uris: Iterable[str | None], own_tbl_id: int | None = None) -> None:
        """Delete the directories of dropped objects (after the drop committed; never fails the call):
        those inside the boundary, but not one another object's location covers, and around the
        locations of other objects inside them. `own_tbl_id`: the table of dropped partitions (it
        stays)."""
        plain = self._plain_deletions(uris, own_tbl_id)
        warehouse.delete_dirs(plain)
        for u in plain:
            ownership.report("delete", u, "ok")

    def _plain_deletions(self, uris: Iterable[str | None], own_tbl_id: int | None,
                        real: warehouse.RealPaths | None = None) -> list[str]:
        """delete_dirs' checks, and its deletions around what others own: the directories it may
        delete whole are left to the caller."""
        allowed = self.allowed(uris, "delete", real)
        if not allowed:
            return []
        try:
            plans = self.owners.plan(allowed, own_tbl_id, real=real)
        except Exception as exc:  # noqa: BLE001 - never fails the call: nothing is deleted then
            log.warning("not deleting %d directories: could not read who owns them: %s", len(allowed), exc)
            return []
        plain = []
        for p in plans:
            if p.covered:
                metrics.incr(REFUSED)
                ownership.report("delete", p.uri, "skipped", f"covered by {p.covered}")
            elif p.keep:
                ownership.delete_around(p.uri, p.keep)
                ownership.report("delete", p.uri, "ok", "kept inside: " + ", ".join(sorted(p.keep)))
            else:
                plain.append(p.uri)
        return plain

    def delete_empty_parents(self, uris: Iterable[str | None], depth: int, within: str | None) -> None:
        """After partitions' directories were deleted: their parents, up to `depth` levels, when
        empty, inside `within` (the table's location) and the boundary, as Hive deletes the
        `k1=v` directory its last `k2=` partition left (never fails the call)."""
        if depth > 0 and within:
            self._delete_with_parents([u for u in uris if u], [], depth, within, warehouse.RealPaths())

    def empty_dirs(self, uris: list[str], own_tbl_id: int | None, what: str) -> None:
        """Empty the directories of `what` (truncate): refused before anything is emptied when one is
        outside the boundary or covered by another object's location; other objects' locations
        inside them are kept."""
        allowed = set(self.allowed(uris, "empty"))
        outside = [u for u in uris if u not in allowed]
        if outside:
            raise MetaError(f"Cannot truncate {what}: {outside[0]} is outside the warehouse, the storage roots and "
                            "the directories the metastore made, so it will not delete files there")
        plans = self.owners.plan(uris, own_tbl_id)
        for p in plans:
            if p.covered:
                text = f"Cannot truncate {what}: its location {p.uri} is covered by {p.covered}"
                ownership.report("empty", p.uri, "denied", text)
                raise OwnershipConflict(text)
        for p in plans:
            ownership.empty_around(p.uri, p.keep)
            ownership.report("empty", p.uri, "ok", ("kept inside: " + ", ".join(sorted(p.keep))) if p.keep else None)

    def check_move(self, conn, src: str, own_tbl_id: int | None, what: str) -> None:
        """Refuse (OwnershipConflict) to move `src`, the directory of `what`, when another object's
        location covers it or lies inside it."""
        for p in self.owners.plan([src], own_tbl_id, conn):
            if p.covered or p.keep:
                why = f"it is covered by {p.covered}" if p.covered else \
                    f"it holds the location of another object ({sorted(p.keep)[0]})"
                text = f"Unable to move {what} from {src}: {why}"
                ownership.report("move", src, "denied", text)
                raise OwnershipConflict(text)

    def delete_files(self, base_path: str, paths: list[str], action: str, tbl_id: int) -> list[str]:
        """Delete files given relative to a Hudi table's base path when the server may `action` there
        (`writable`), and only those that are the table's own (`deletable_files`): the deleted ones,
        [] when the files stay."""
        if not self.writable(base_path, action, tbl_id):
            return []
        mine = self.deletable_files(base_path, paths, tbl_id)
        for rel in mine:
            full = warehouse.join_within(base_path, rel)
            warehouse.delete_file(full)
            ownership.report("delete", full or rel, "ok")
        return mine

    def deletable_files(self, base_path: str, paths: list[str], tbl_id: int) -> list[str]:
        """Of files relative to a Hudi table's base path, those the server may delete: under the
        base path (resolved), not covered by another object's location (its merge-on-read views
        are the table's own)."""
        plan = self.owners.plan([base_path], tbl_id, views=True)
        if not plan:
            return []
        if plan[0].covered:
            ownership.report("delete", base_path, "skipped", f"covered by {plan[0].covered}")
            return []
        base_key, keep = plan[0].key, plan[0].keep
        out = []
        for rel in paths:
            full = warehouse.join_within(base_path, rel)
            key = ownership.location_key(full) if full else None
            if key is None or not key.startswith(base_key) or any(key.startswith(k) for k in keep):
                ownership.report("delete", full or rel, "skipped", "not the table's own file")
                continue
            out.append(rel)
        return out


__all__ = ["REFUSED", "StorageBoundary", "canonical"]
