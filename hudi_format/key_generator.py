"""Record keys computed from data columns, as Hudi's key generators make them: for tables written
without meta fields (`hoodie.populate.meta.fields=false`), whose files hold no `_hoodie_record_key`.

One record key field gives the value itself (SimpleKeyGenerator, NonpartitionedKeyGenerator);
several, or the complex generator, give `f1:v1,f2:v2`, with `__null__` / `__empty__` for a null or
empty value (ComplexKeyGenerator). Values are written as Java writes them for strings, integers
and booleans; other key types are refused (HudiFormatError) rather than guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hudi_format.errors import HudiFormatError

NULL, EMPTY = "__null__", "__empty__"


def is_complex(fields: Sequence[str], generator: str | None) -> bool:
    return len(fields) > 1 or "complex" in (generator or "").lower()


def value_text(field: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return str(value)
    raise HudiFormatError(f"record key field {field!r} holds {type(value).__name__} values: keys of that type "
                          "are not computed (only strings, integers and booleans)")


def record_keys(columns: dict[str, list[Any]], fields: Sequence[str], generator: str | None) -> list[str]:
    """The keys of the rows whose record key field values `columns` holds (field -> values)."""
    if not fields:
        raise HudiFormatError("the table names no record key fields")
    missing = [f for f in fields if f not in columns]
    if missing:
        raise HudiFormatError(f"record key field {missing[0]!r} is not in the data")
    rows = zip(*(columns[f] for f in fields))
    if not is_complex(fields, generator):
        out = []
        for (v,) in rows:
            if v is None or v == "":
                raise HudiFormatError(f"a record's key field {fields[0]!r} is null or empty")
            out.append(value_text(fields[0], v))
        return out
    out = []
    for values in rows:
        if all(v is None or v == "" for v in values):
            raise HudiFormatError(f"a record's key fields {', '.join(fields)} are all null or empty")
        out.append(",".join(f"{f}:{NULL if v is None else EMPTY if v == '' else value_text(f, v)}"
                            for f, v in zip(fields, values)))
    return out
