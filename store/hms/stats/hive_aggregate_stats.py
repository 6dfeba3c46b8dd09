"""get_aggr_stats_for: the column statistics of a set of partitions aggregated per column, as Hive 4's
metastore does without bit vectors (MetaStoreDirectSql.aggrColStatsForPartitions).

Per column (and type): low values min, high values max, numNulls / numTrues / numFalses summed,
numDVs / avgColLen / maxColLen max. `partsFound` counts the requested partitions that have
statistics for every requested column. When some requested partitions lack a column's statistics
but at least two have them, Hive extrapolates linearly over the partitions' positions in the
request: sums are scaled (integer arithmetic: sum / found * requested), min / max values are
extended from the extreme partitions to the borders (LinearExtrapolatePartStatus); so does this.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
from thrift.TSerialization import deserialize, serialize

from store.db import schema as S
from store.db.database import Store
from store.db.dialect import BATCH
from store.errors import NoSuchObject
from store.hms.common import DEFAULT_CATALOG
from store.hms.partitions import TableContexts, make_name, values_from_name
from store.hms.stats.hive_column_stats import DerivedStatistics
from thrift_idl.hive_metastore.ttypes import (
    AggrStats,
    ColumnStatisticsData,
    ColumnStatisticsObj,
    Date,
    Decimal,
    Timestamp,
)

DEFAULT_ENGINE = "hive"
_PROTO = TBinaryProtocolAcceleratedFactory()
_SUM, _MIN, _MAX = "sum", "min", "max"
# the statistics of each ColumnStatisticsData member: field -> how partitions combine
_FIELDS = {
    "booleanStats": {"numTrues": _SUM, "numFalses": _SUM, "numNulls": _SUM},
    "longStats": {"lowValue": _MIN, "highValue": _MAX, "numNulls": _SUM, "numDVs": _MAX},
    "doubleStats": {"lowValue": _MIN, "highValue": _MAX, "numNulls": _SUM, "numDVs": _MAX},
    "decimalStats": {"lowValue": _MIN, "highValue": _MAX, "numNulls": _SUM, "numDVs": _MAX},
    "dateStats": {"lowValue": _MIN, "highValue": _MAX, "numNulls": _SUM, "numDVs": _MAX},
    "timestampStats": {"lowValue": _MIN, "highValue": _MAX, "numNulls": _SUM, "numDVs": _MAX},
    "stringStats": {"maxColLen": _MAX, "avgColLen": _MAX, "numNulls": _SUM, "numDVs": _MAX},
    "binaryStats": {"maxColLen": _MAX, "avgColLen": _MAX, "numNulls": _SUM},
}


@dataclass
class _Sample:
    """One partition's statistics of one column: its position in the request and its data."""

    index: int
    member: str  # the ColumnStatisticsData field that is set
    data: Any  # e.g. a LongColumnStatsData


class AggregateStats:
    def __init__(self, store: Store, derived: DerivedStatistics | None = None):
        self.store = store
        self.contexts = TableContexts(store.backend)
        self.derived = derived  # statistics of the columns no update gave (store/hms/stats/hive_column_stats.py)

    def aggregate(self, db: str, table: str, part_names: Sequence[str], col_names: Sequence[str],
                  engine: str | None = None) -> AggrStats:
        cols = list(dict.fromkeys(c.lower() for c in col_names or []))
        if not cols or not part_names:
            return AggrStats(colStats=[], partsFound=0)
        with self.store.read() as conn:
            try:
                ctx = self.contexts.read(conn, db, table)
            except NoSuchObject as exc:
                raise NoSuchObject(f"Specified catalog.database.table does not exist : "
                                   f"{DEFAULT_CATALOG}.{db.lower()}.{table.lower()}") from exc
            index: dict[str, int] = {}
            for i, name in enumerate(part_names):
                try:
                    index.setdefault(make_name(ctx.key_names, values_from_name(ctx.key_names, name)), i)
                except ValueError:
                    continue
            p, t = S.partitions, S.part_col_stats
            rows: list[Any] = []
            names = list(index)
            for i in range(0, len(names), BATCH):
                rows.extend(conn.execute(
                    select(p.c.part_name, t.c.column_name, t.c.column_type, t.c.stats)
                    .select_from(t.join(p, p.c.part_id == t.c.part_id))
                    .where(p.c.tbl_id == ctx.tbl_id, p.c.part_name.in_(names[i:i + BATCH]),
                           t.c.column_name.in_(cols), t.c.engine == (engine or DEFAULT_ENGINE))).all())
            if self.derived is not None and (engine or DEFAULT_ENGINE) == DEFAULT_ENGINE:
                have: dict[str, set[str]] = {}
                for r in rows:
                    have.setdefault(r.part_name, set()).add(r.column_name)
                for part, objs in self.derived.partition_columns(conn, ctx.db_name, ctx.name, names, cols,
                                                                 have).items():
                    rows.extend(_Row(part, o.colName, o.colType, serialize(o.statsData, _PROTO)) for o in objs)
        return _aggregate(rows, index, len(part_names), len(cols))


@dataclass(frozen=True)
class _Row:
    part_name: str
    column_name: str
    column_type: str
    stats: bytes


def _aggregate(rows: Sequence[Any], index: dict[str, int], requested: int, n_cols: int) -> AggrStats:
    samples: dict[tuple[str, str], list[_Sample]] = {}
    per_partition: dict[str, int] = {}
    for r in rows:
        data = deserialize(ColumnStatisticsData(), bytes(r.stats), _PROTO)
        member = next((m for m in _FIELDS if getattr(data, m, None) is not None), None)
        if member is None:
            continue
        samples.setdefault((r.column_name, r.column_type), []).append(
            _Sample(index[r.part_name], member, getattr(data, member)))
        per_partition[r.part_name] = per_partition.get(r.part_name, 0) + 1
    parts_found = sum(1 for n in per_partition.values() if n == n_cols)
    out = []
    for (name, col_type), found in samples.items():
        member = found[0].member
        found = [s for s in found if s.member == member]
        extrapolate = parts_found != requested and requested > len(found) >= 2
        data = _extrapolated(member, found, requested) if extrapolate else _combined(member, found)
        out.append(ColumnStatisticsObj(colName=name, colType=col_type,
                                       statsData=ColumnStatisticsData(**{member: data})))
    return AggrStats(colStats=out, partsFound=parts_found)


def _combined(member: str, found: Sequence[_Sample]) -> Any:
    """The plain aggregate over the partitions that have statistics."""
    data = type(found[0].data)()
    for field, how in _FIELDS[member].items():
        values = [v for v in (getattr(s.data, field) for s in found) if v is not None]
        if not values:
            continue
        if how == _SUM:
            setattr(data, field, sum(values))
        else:
            pick = min if how == _MIN else max
            setattr(data, field, pick(values, key=_number))
    return data


def _extrapolated(member: str, found: Sequence[_Sample], requested: int) -> Any:
    data = type(found[0].data)()
    for field, how in _FIELDS[member].items():
        present = [s for s in found if getattr(s.data, field) is not None]
        if not present:
            continue
        if how == _SUM:  # Hive: the sum over the found partitions / their count * the requested count
            setattr(data, field, sum(getattr(s.data, field) for s in present) // len(found) * requested)
            continue
        ordered = sorted(present, key=lambda s: _number(getattr(s.data, field)))
        low, high = ordered[0], ordered[-1]
        setattr(data, field, _linear(how, getattr(low.data, field), low.index, getattr(high.data, field),
                                     high.index, requested - 1))
    return data


def _linear(how: str, low: Any, low_at: int, high: Any, high_at: int, border: int) -> Any:
    """LinearExtrapolatePartStatus: the value at the left or right border of the request, on the
    line through the smallest and the largest value (at their partitions' positions)."""
    if low_at == high_at:
        return low
    lo, hi = _number(low), _number(high)
    if how == _MAX:
        if low_at < high_at:
            value = lo + _scaled(hi - lo, border - low_at, high_at - low_at, lo)
        else:
            value = lo + _scaled(hi - lo, low_at, low_at - high_at, lo)
    elif low_at < high_at:
        value = hi - _scaled(hi - lo, high_at, high_at - low_at, lo)
    else:
        value = hi - _scaled(hi - lo, border - high_at, low_at - high_at, lo)
    return _like(low, value)


def _scaled(span: Any, times: int, over: int, sample: Any) -> Any:
    """span * times / over, in Java's arithmetic for the value's type (long: truncating)."""
    if isinstance(sample, int):
        product = span * times
        quotient = abs(product) // abs(over)
        return quotient if (product >= 0) == (over > 0) else -quotient
    return span * times / over


def _number(value: Any) -> Any:
    """A statistic as a number: dates, timestamps and decimals by their value."""
    if isinstance(value, Date):
        return value.daysSinceEpoch
    if isinstance(value, Timestamp):
        return value.secondsSinceEpoch
    if isinstance(value, Decimal):
        return float(decimal.Decimal(int.from_bytes(value.unscaled, "big", signed=True)).scaleb(-value.scale))
    return value


def _like(sample: Any, value: Any) -> Any:
    """`value` in the type of the statistic `sample`."""
    if isinstance(sample, Date):
        return Date(daysSinceEpoch=int(value))
    if isinstance(sample, Timestamp):
        return Timestamp(secondsSinceEpoch=int(value))
    if isinstance(sample, Decimal):
        d = decimal.Decimal(repr(float(value)))
        sign, digits, exponent = d.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        scale = -int(exponent)
        if scale < 0:
            unscaled, scale = unscaled * 10 ** -scale, 0
        return Decimal(scale=scale, unscaled=unscaled.to_bytes((unscaled.bit_length() + 8) // 8 or 1, "big",
                                                               signed=True))
    if isinstance(sample, float):
        return float(value)
    return value
