"""Errors a pipeline job raises (besides the metastore's: client/errors.py)."""


class HudiWriteError(Exception):
    """A write failed; the table is unchanged for readers."""


class SchemaEvolutionError(HudiWriteError, ValueError):
    """The batch's schema cannot be written to the table (raised before any file is written)."""


class WriteConflictError(HudiWriteError):
    """Another writer committed to the same file groups (or partitions) first; this job's instant was
    rolled back and its files deleted."""

    def __init__(self, message: str, instant: str, conflicting: list[str]):
        super().__init__(message)
        self.instant = instant
        self.conflicting = list(conflicting)


class ServiceClaimed(HudiWriteError):
    """A pending table service (a compaction the server scheduled) is already being run by another
    executor: this one left it alone."""

    def __init__(self, message: str, instant: str):
        super().__init__(message)
        self.instant = instant


class ServicePlanGone(ServiceClaimed):
    """The claimed service's plan could no longer run (a write since it was planned touched its file
    groups): the server rolled it back instead of handing it out, and schedules a new one when due."""
