"""Table constraints (Hive's KEY_CONSTRAINTS): primary and foreign keys, unique, not-null, default and
check constraints (`ConstraintService`, constraint_service.py), their rows checked as Hive's store
checks them (constraint_rows.py).

The door of store/hms/constraints: other packages import these names from here, never its modules.
Imports store/hms's `common`, `catalog` and `partitions`.
"""

from store.hms.constraints.constraint_service import ConstraintService

__all__ = ["ConstraintService"]
