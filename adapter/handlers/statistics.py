"""Column statistics calls."""

from __future__ import annotations

from adapter.naming import check_catalog, db_name
from store.hms.stats import AggregateStats, StatisticsService
from thrift_idl.hive_metastore.ttypes import (
    PartitionsStatsResult,
    SetPartitionsStatsResponse,
    TableStatsResult,
)


class StatisticsHandler:
    def __init__(self, stats: StatisticsService, aggregates: AggregateStats | None = None):
        self.stats = stats
        self.aggregates = aggregates

    def _normalize(self, stats_obj):
        if stats_obj is not None and stats_obj.statsDesc is not None:
            stats_obj.statsDesc.dbName = db_name(stats_obj.statsDesc.dbName, stats_obj.statsDesc.catName)
        return stats_obj

    def update_table_column_statistics(self, stats_obj):
        if stats_obj is not None and stats_obj.statsDesc is not None:
            stats_obj.statsDesc.isTblLevel = True
            stats_obj.statsDesc.partName = None
        return self.stats.update(self._normalize(stats_obj))

    def update_partition_column_statistics(self, stats_obj):
        if stats_obj is not None and stats_obj.statsDesc is not None:
            stats_obj.statsDesc.isTblLevel = False
        return self.stats.update(self._normalize(stats_obj))

    def update_table_column_statistics_req(self, req):
        for s in req.colStats or []:
            self.stats.update(self._normalize(s), req.engine)
        return SetPartitionsStatsResponse(result=True)

    def update_partition_column_statistics_req(self, req):
        return self.update_table_column_statistics_req(req)

    def set_aggr_stats_for(self, request):
        for s in request.colStats or []:
            self.stats.update(self._normalize(s), getattr(request, "engine", None), batch=True)
        return True

    def get_table_column_statistics(self, db_name_, tbl_name, col_name):
        # None: as Hive, no result, which clients see as TApplicationException(MISSING_RESULT)
        return self.stats.table_column_statistics(db_name(db_name_), tbl_name or "", col_name or "")

    def get_partition_column_statistics(self, db_name_, tbl_name, part_name, col_name):
        return self.stats.partition_column_statistics(db_name(db_name_), tbl_name or "", part_name or "",
                                                      col_name or "")

    def get_table_statistics_req(self, request):
        _, objs = self.stats.table_stats(db_name(request.dbName, request.catName), request.tblName or "",
                                         request.colNames or [], getattr(request, "engine", None))
        return TableStatsResult(tableStats=objs)

    def get_partitions_statistics_req(self, request):
        found = self.stats.partition_stats(db_name(request.dbName, request.catName), request.tblName or "",
                                           request.partNames or [], request.colNames or [],
                                           getattr(request, "engine", None))
        return PartitionsStatsResult(partStats=found)

    def delete_table_column_statistics(self, db_name_, tbl_name, col_name, engine=None):
        return self.stats.delete(db_name(db_name_), tbl_name or "", None, col_name, engine)

    def delete_partition_column_statistics(self, db_name_, tbl_name, part_name, col_name, engine=None):
        return self.stats.delete(db_name(db_name_), tbl_name or "", part_name or "", col_name, engine)

    def get_aggr_stats_for(self, request):
        check_catalog(request.catName)
        assert self.aggregates is not None, "StatisticsHandler needs the aggregate statistics service"
        return self.aggregates.aggregate(db_name(request.dbName), request.tblName or "", request.partNames or [],
                                         request.colNames or [], getattr(request, "engine", None))
