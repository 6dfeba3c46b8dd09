"""Record keys as Hudi's key generators make them: the format of a table's `_hoodie_record_key`
(`field_prefixed`), and keys computed from data columns for tables written without meta fields
(`hoodie.populate.meta.fields=false`), whose files hold no `_hoodie_record_key`.

One record key field gives the value itself (SimpleKeyGenerator, NonpartitionedKeyGenerator);
several give `f1:v1,f2:v2`, with `__null__` / `__empty__` for a null or empty value
(ComplexKeyGenerator). The complex generator with one field gives `f1:v1` too (Hudi 0.14.0 and
older, and 1.1 on: Hudi's default), or the value alone where the table's config says
`hoodie.write.complex.keygen.new.encoding=true` (what Hudi 0.14.1 to 1.0.2 wrote, and this
project's pipeline before 2026-12-04: migration 0024 wrote the setting into those tables' configs).
Values are written as Java writes them for strings, integers and booleans; other key types are
refused (HudiFormatError) rather than guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hudi_format.config_keys import COMPLEX_KEYGEN_NEW_ENCODING, KEYGENERATOR_TYPE, default_of
from hudi_format.errors import HudiFormatError

NULL, EMPTY = "__null__", "__empty__"


def complex_generator(generator: str | None, properties: Mapping[str, str] | None = None) -> bool:
    """The table's key generator is the complex one: by its class (`hoodie.table.keygenerator.class`)
    or, for tables of version 8 and on, its type (`hoodie.table.keygenerator.type`)."""
    named = [generator or "", (properties or {}).get(KEYGENERATOR_TYPE) or ""]
    return any("complex" in n.lower() for n in named)


def field_prefixed(fields: Sequence[str], generator: str | None, properties: Mapping[str, str] | None = None) -> bool:
    """Whether the table's record keys are `field:value` pairs: several fields, or the complex
    generator with one field unless the config says `hoodie.write.complex.keygen.new.encoding=true`."""
    if len(fields) > 1:
        return True
    if not complex_generator(generator, properties):
        return False
    plain = (properties or {}).get(COMPLEX_KEYGEN_NEW_ENCODING, default_of(COMPLEX_KEYGEN_NEW_ENCODING))
    return plain.strip().lower() != "true"


def value_text(field: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return str(value)
    raise HudiFormatError(f"record key field {field!r} holds {type(value).__name__} values: keys of that type "
                          "are not computed (only strings, integers and booleans)")


def record_keys(columns: dict[str, list[Any]], fields: Sequence[str], generator: str | None,
                properties: Mapping[str, str] | None = None) -> list[str]:
    """The keys of the rows whose record key field values `columns` holds (field -> values), in the
    format of the table (`properties`: its config)."""
    if not fields:
        raise HudiFormatError("the table names no record key fields")
    missing = [f for f in fields if f not in columns]
    if missing:
        raise HudiFormatError(f"record key field {missing[0]!r} is not in the data")
    rows = zip(*(columns[f] for f in fields))
    if not field_prefixed(fields, generator, properties):
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
