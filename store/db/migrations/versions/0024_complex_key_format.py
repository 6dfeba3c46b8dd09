"""hudi_table.properties: the record key format of tables keyed by the complex key generator on one
field, written into their config (`hoodie.write.complex.keygen.new.encoding`), so that the
pipeline's switch to Hudi's `id:5` for new tables leaves the keys of existing ones as they are

Until this revision the pipeline keyed such tables by the value alone (`5`). A table whose config
does not say otherwise is keyed `id:5` from now on (hudi_format/key_generator.py), so each existing
one gets the setting its keys need: `false` when its record index holds a field-prefixed key, else
`true`. Tables without meta fields (their keys were computed field-prefixed already) and tables
whose timeline Hudi's own writers keep on storage (their writers chose their keys) are left alone.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-04 16:40:00
"""
import json

import sqlalchemy as sa
from alembic import op

from hudi_format.config_keys import (
    COMPLEX_KEYGEN_NEW_ENCODING,
    KEYGENERATOR_CLASS,
    KEYGENERATOR_TYPE,
    POPULATE_META_FIELDS,
    RECORDKEY_FIELDS,
    TIMELINE_SOURCE,
)

revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None


def upgrade() -> None:
    mark(op.get_bind())


def mark(conn) -> int:
    """Writes the setting into each table that needs it; the number of tables changed."""
    changed = 0
    rows = conn.execute(sa.text("SELECT tbl_id, properties FROM hudi_table")).all()
    for tbl_id, text in rows:
        props = json.loads(text or "{}")
        fields = [f for f in (props.get(RECORDKEY_FIELDS) or "").split(",") if f]
        complex_generator = any("complex" in (props.get(k) or "").lower()
                                for k in (KEYGENERATOR_CLASS, KEYGENERATOR_TYPE))
        if (len(fields) != 1 or not complex_generator or COMPLEX_KEYGEN_NEW_ENCODING in props
                or (props.get(POPULATE_META_FIELDS) or "true").lower() == "false"
                or (props.get(TIMELINE_SOURCE) or "").lower() == "storage"):
            continue
        key = conn.execute(sa.text("SELECT record_key FROM record_index WHERE tbl_id = :t LIMIT 1"),
                           {"t": tbl_id}).scalar()
        prefixed = key is not None and key.startswith(fields[0] + ":")
        props[COMPLEX_KEYGEN_NEW_ENCODING] = "false" if prefixed else "true"
        conn.execute(sa.text("UPDATE hudi_table SET properties = :p WHERE tbl_id = :t"),
                     {"p": json.dumps(props, sort_keys=True), "t": tbl_id})
        changed += 1
    return changed


def downgrade() -> None:
    pass  # the setting says what the keys are: it stays true of them
