"""RFC-36 instants of a Hudi table's timeline: the REQUESTED -> INFLIGHT move (completion is
commit.py), each state's metadata (`instant_meta`), heartbeats and markers.

Heartbeats: an instant's `start_ts` is its writer's last heartbeat (epoch ms) and `duration` its
timeout (seconds); a pending instant whose heartbeat expired has failed and may be rolled back. An
instant that lost a commit conflict gets `start_ts` 0: expired at once. A table service's plan (a
compaction or clustering, REQUESTED) is no write and has no heartbeat: it waits for an executor
however long (`waiting_plan`: never failed; service_plans.py rolls back one that can no longer
run). The executor that claims it (REQUESTED -> INFLIGHT, service_plans.py `claim`) heartbeats it
from then on, and its claim expires after the table's heartbeat timeout (`claim_timeout_s`): the
next executor then rolls the attempt back to REQUESTED and runs the plan again (rollback.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sqlalchemy import Connection, Row, delete, or_, select, update

from hudi_format.commit_metadata import confined
from hudi_format.config_keys import CLIENT_HEARTBEAT_INTERVAL_MS, CLIENT_HEARTBEAT_TOLERABLE_MISSES, default_of
from hudi_format.errors import InvalidMetadata
from hudi_format.instant import (
    ACTIONS,
    COMPLETED,
    COMPLETED_AS,
    INFLIGHT,
    REQUESTED,
    STATE_NAMES,
    STATES,
    Instant,
)
from store.db import schema as S
from store.db.database import Store
from store.errors import AlreadyExists, InvalidObject, InvalidOperation, MetaError, NoSuchObject
from store.hudi.tables import HudiTableRef, HudiTables
from store.hudi.timeline.instant_times import InstantTimes, check_instant_time
from store.hudi.timeline.savepoints import RESTORE, SAVEPOINT, check_request

DEFAULT_HEARTBEAT_TIMEOUT_S = 120
SERVICES = ("compaction", "logcompaction", "clustering")  # plans the server schedules and an executor claims
PLAN_WAITS = 0  # the `duration` of a service's plan waiting for an executor: no heartbeat, no expiry


def waiting_plan(action: str, state: int | str) -> bool:
    """A compaction's, log compaction's or clustering's plan not claimed: never a failed instant."""
    return action in SERVICES and state in (REQUESTED, "REQUESTED")


def _whole(props: dict[str, str], key: str, least: int) -> int:
    try:
        return max(least, int(props.get(key) or default_of(key)))
    except ValueError:
        return int(default_of(key))


def claim_timeout_s(props: dict[str, str] | None) -> int:
    """How long a claimed service instant lives without a heartbeat: Hudi's heartbeat timeout,
    `hoodie.client.heartbeat.interval_in_ms` x (`hoodie.client.heartbeat.tolerable.misses` + 1), of
    the table's config (60 s x 3 by default)."""
    props = props or {}
    interval = _whole(props, CLIENT_HEARTBEAT_INTERVAL_MS, 1)
    misses = _whole(props, CLIENT_HEARTBEAT_TOLERABLE_MISSES, 0)
    return max(1, -(-interval * (misses + 1) // 1000))


def instant_from_row(row: Row) -> Instant:
    """An `instant` row as the service answers it."""
    return Instant(ts=row.ts, action=row.action, state=STATE_NAMES[row.state], completion_ts=row.completion_ts,
                   requested_ms=row.requested_ms, heartbeat_ms=row.start_ts, heartbeat_timeout_s=row.duration)


def put_meta(conn: Connection, tbl_id: int, ts: str, action: str, state: int, data: bytes | None) -> None:
    """Keep the metadata of one state of an instant (plan, workload profile, commit metadata)."""
    m = S.instant_meta
    conn.execute(delete(m).where(m.c.tbl_id == tbl_id, m.c.ts == ts, m.c.action == action, m.c.state == state))
    conn.execute(m.insert().values(tbl_id=tbl_id, ts=ts, action=action, state=state, data=data or b""))


def request_plan(conn: Connection, tbl_id: int, times, action: str, plan: bytes, now_ms: int) -> str:
    """Request a table service's instant (`action`: compaction, log compaction, clustering) with its
    plan, in the caller's transaction; its instant time (`times`: the table's InstantTimes)."""
    ts = times.advance(conn, tbl_id)
    conn.execute(S.instant.insert().values(
        tbl_id=tbl_id, ts=ts, action=action, state=REQUESTED, requested_ms=now_ms, requested_ts=ts,
        duration=PLAN_WAITS, start_ts=now_ms))
    put_meta(conn, tbl_id, ts, action, REQUESTED, plan)
    return ts


def insert_instant(conn: Connection, **values: object) -> int:
    """Insert one `instant` row; its id."""
    key = conn.execute(S.instant.insert().values(**values)).inserted_primary_key
    if key is None:  # only inserts of several rows leave it empty
        raise MetaError("The database returned no id for a new instant")
    return int(key[0])


def _state_codes(states: Iterable[str | int]) -> list[int]:
    return [STATES[s] if isinstance(s, str) else int(s) for s in states]


class Instants:
    def __init__(self, store: Store, tables: HudiTables, times: InstantTimes, clock_ms: Callable[[], int]):
        self.store = store
        self.tables = tables
        self.times = times
        self.clock_ms = clock_ms

    def row(self, conn: Connection, tbl_id: int, ts: str, action: str | None = None, lock: bool = False) -> Row:
        """The `instant` row of ts (of `action`, as requested or as completed)."""
        # pending first: a savepoint shares its completed commit's time
        q = select(S.instant).where(S.instant.c.tbl_id == tbl_id, S.instant.c.ts == ts).order_by(S.instant.c.state)
        if action:
            q = q.where(or_(S.instant.c.action == action, S.instant.c.action == COMPLETED_AS.get(action, action)))
        if lock and self.store.backend != "sqlite":
            q = q.with_for_update()
        rows = conn.execute(q).all()
        if not rows:
            raise NoSuchObject(f"Instant {ts}{'.' + action if action else ''} not found")
        return rows[0]

    # --- writes -----------------------------------------------------------------------------------

    def new_instant_time(self, db: str, tbl: str) -> str:
        return self.store.run_write(self._new_time_in, db, tbl)

    def _new_time_in(self, conn: Connection, db: str, tbl: str) -> str:
        return self.times.advance(conn, self.tables.table_ref(conn, db, tbl).tbl_id)

    def create_instant(self, db: str, tbl: str, ts: str | None, action: str, plan: bytes | None,
                       heartbeat_timeout_s: int = 0) -> Instant:
        """A REQUESTED instant with its plan; at `ts` when given, else at a new instant time."""
        if action not in ACTIONS:
            raise InvalidObject(f"Unknown Hudi action {action!r}; one of {', '.join(ACTIONS)}")
        if ts:
            check_instant_time(ts)
        timeout = heartbeat_timeout_s if heartbeat_timeout_s and heartbeat_timeout_s > 0 \
            else DEFAULT_HEARTBEAT_TIMEOUT_S
        return self.store.run_write(self._create_in, db, tbl, ts, action, plan, timeout)

    def _create_in(self, conn: Connection, db: str, tbl: str, ts: str | None, action: str, plan: bytes | None,
                   timeout: int) -> Instant:
        ref = self.tables.table_ref(conn, db, tbl)
        requested_ts = self.times.advance(conn, ref.tbl_id, at_least=ts)
        instant_ts = ts or requested_ts
        if action in (SAVEPOINT, RESTORE):
            if action == SAVEPOINT and not ts:
                raise InvalidObject("A savepoint is requested at the instant time of the commit it saves")
            check_request(conn, ref, instant_ts, action, plan)
        if action != SAVEPOINT and conn.execute(select(S.instant.c.instant_id).where(
                S.instant.c.tbl_id == ref.tbl_id, S.instant.c.ts == instant_ts)).first():
            raise AlreadyExists(f"Instant {instant_ts} already exists on {ref.db_name}.{ref.name}")
        now = self.clock_ms()
        conn.execute(S.instant.insert().values(
            tbl_id=ref.tbl_id, ts=instant_ts, action=action, state=REQUESTED, requested_ms=now,
            requested_ts=requested_ts, duration=timeout, start_ts=now))
        put_meta(conn, ref.tbl_id, instant_ts, action, REQUESTED, plan)
        return Instant(instant_ts, action, "REQUESTED", None, now, now, timeout)

    def transition_to_inflight(self, db: str, tbl: str, ts: str, action: str, profile: bytes | None) -> Instant:
        return self.store.run_write(self._inflight_in, db, tbl, ts, action, profile)

    def _inflight_in(self, conn: Connection, db: str, tbl: str, ts: str, action: str,
                     profile: bytes | None) -> Instant:
        ref = self.tables.table_ref(conn, db, tbl)
        return self.inflight_in(conn, ref, self.row(conn, ref.tbl_id, ts, action, lock=True), profile)

    def inflight_in(self, conn: Connection, ref: HudiTableRef, row: Row, profile: bytes | None) -> Instant:
        """REQUESTED -> INFLIGHT of `row` (locked by the caller)."""
        ts = row.ts
        if row.state != REQUESTED:
            raise InvalidOperation(
                f"Cannot move instant {ts}.{row.action} from {STATE_NAMES[row.state]} to INFLIGHT")
        now = self.clock_ms()
        # a claimed service lives by its executor's heartbeats from now on
        duration = claim_timeout_s(ref.config.properties) if row.action in SERVICES else row.duration
        conn.execute(update(S.instant).where(S.instant.c.instant_id == row.instant_id).values(
            state=INFLIGHT, start_ts=now, duration=duration))
        put_meta(conn, ref.tbl_id, ts, row.action, INFLIGHT, profile)
        return Instant(ts, row.action, "INFLIGHT", None, row.requested_ms, now, duration)

    def heartbeat(self, db: str, tbl: str, ts: str) -> None:
        self.store.run_write(self._heartbeat_in, db, tbl, ts)

    def _heartbeat_in(self, conn: Connection, db: str, tbl: str, ts: str) -> None:
        ref = self.tables.table_ref(conn, db, tbl)
        row = self.row(conn, ref.tbl_id, ts)
        if row.state == COMPLETED:
            raise InvalidOperation(f"Instant {ts} is already completed")
        if row.start_ts == 0:  # see expire
            raise InvalidOperation(f"Instant {ts} lost a commit conflict and is to be rolled back")
        conn.execute(update(S.instant).where(S.instant.c.instant_id == row.instant_id).values(
            start_ts=self.clock_ms()))

    def expire(self, db: str, tbl: str, ts: str) -> None:
        """An instant that lost a conflict can never complete: its heartbeat is expired so that its
        writer (or the next one) rolls it back at once."""
        self.store.run_write(self._expire_in, db, tbl, ts)

    def _expire_in(self, conn: Connection, db: str, tbl: str, ts: str) -> None:
        ref = self.tables.table_ref(conn, db, tbl)
        conn.execute(update(S.instant).where(
            S.instant.c.tbl_id == ref.tbl_id, S.instant.c.ts == ts, S.instant.c.state != COMPLETED
        ).values(start_ts=0))

    def add_markers(self, db: str, tbl: str, ts: str, paths: list[str]) -> None:
        """Files the writer of a pending instant is about to write (what its rollback deletes)."""
        self.store.run_write(self._add_markers_in, db, tbl, ts, paths)

    def _add_markers_in(self, conn: Connection, db: str, tbl: str, ts: str, paths: list[str]) -> None:
        ref = self.tables.table_ref(conn, db, tbl)
        row = self.row(conn, ref.tbl_id, ts)
        if row.state == COMPLETED:
            raise InvalidOperation(f"Instant {ts} is already completed")
        for p in dict.fromkeys(paths or []):  # rollback deletes them: never outside the base path
            try:
                confined(p, "marker path")
            except InvalidMetadata as exc:
                raise InvalidObject(exc.message) from None
        wanted = list(dict.fromkeys(p.strip("/") for p in paths or []))
        m = S.instant_markers
        have: set[str] = set()
        for start in range(0, len(wanted), 500):  # (only these paths: a writer adds one per file)
            have.update(conn.execute(select(m.c.path).where(
                m.c.tbl_id == ref.tbl_id, m.c.ts == ts, m.c.path.in_(wanted[start:start + 500]))).scalars())
        new = [p for p in wanted if p not in have]
        if new:
            conn.execute(S.instant_markers.insert(), [{"tbl_id": ref.tbl_id, "ts": ts, "path": p} for p in new])

    # --- reads ------------------------------------------------------------------------------------

    def list_instants(self, db: str, tbl: str, states: Iterable[str | int] | None = None,
                      actions: Iterable[str] | None = None, min_ts: str | None = None,
                      max_ts: str | None = None) -> list[Instant]:
        with self.store.read() as conn:
            ref = self.tables.table_ref(conn, db, tbl)
            i = S.instant
            q = select(i).where(i.c.tbl_id == ref.tbl_id)
            if states:
                q = q.where(i.c.state.in_(_state_codes(states)))
            if actions:
                q = q.where(i.c.action.in_(list(actions)))
            if min_ts:
                q = q.where(i.c.ts >= min_ts)
            if max_ts:
                q = q.where(i.c.ts <= max_ts)
            return [instant_from_row(r) for r in conn.execute(q.order_by(i.c.ts, i.c.action))]

    def instant_metadata(self, db: str, tbl: str, ts: str, action: str, state: str | int) -> bytes:
        with self.store.read() as conn:
            ref = self.tables.table_ref(conn, db, tbl)
            m = S.instant_meta
            code = _state_codes([state])[0]
            data = conn.execute(select(m.c.data).where(
                m.c.tbl_id == ref.tbl_id, m.c.ts == ts, m.c.state == code,
                m.c.action.in_([action, COMPLETED_AS.get(action, action)]))).scalar()
            if data is None:
                raise NoSuchObject(f"No {STATE_NAMES.get(code, state)} metadata for instant {ts}.{action}")
            return bytes(data)

    def failed_instants(self, db: str, tbl: str) -> list[Instant]:
        """Pending instants whose writer stopped heartbeating (never a plan waiting for an executor)."""
        now = self.clock_ms()
        return [i for i in self.list_instants(db, tbl, states=["REQUESTED", "INFLIGHT"])
                if i.heartbeat_ms + i.heartbeat_timeout_s * 1000 < now and not waiting_plan(i.action, i.state)]
