"""User-defined functions registered in databases (`FunctionService`, function_service.py).

The door of store/hms/functions: other packages import these names from here, never its modules.
Imports store/hms's `common`, `catalog` and `notification_log`.
"""

from store.hms.functions.function_service import FunctionService

__all__ = ["FunctionService"]
