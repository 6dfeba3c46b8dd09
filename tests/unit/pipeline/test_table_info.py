"""TableInfo.of: the ordering field of a table Hudi 1.1+ wrote (`hoodie.table.ordering.fields` alone)
is the pipeline's precombine field; several are refused."""

from __future__ import annotations

import pytest

from hudi_format.config_keys import ORDERING_FIELDS
from hudi_format.table_config import HudiTableConfig
from pipeline import HudiWriteError
from pipeline.table import TableInfo


def _config(precombine: str | None, props: dict) -> HudiTableConfig:
    return HudiTableConfig(db_name="db", table_name="t", base_path="/x", table_type="MERGE_ON_READ",
                           record_key_fields=["id"], partition_fields=[], precombine_field=precombine,
                           table_version=9, properties=props)


def test_ordering_field_is_the_precombine_field():
    assert TableInfo.of(_config(None, {ORDERING_FIELDS: "ts"})).precombine_field == "ts"
    assert TableInfo.of(_config("ts", {ORDERING_FIELDS: "ts"})).precombine_field == "ts"
    assert TableInfo.of(_config(None, {})).precombine_field is None
    with pytest.raises(HudiWriteError, match="several fields"):
        TableInfo.of(_config(None, {ORDERING_FIELDS: "ts,seq"}))
