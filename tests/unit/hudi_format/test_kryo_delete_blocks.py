"""Version-2 delete blocks (Hudi before 0.14): Kryo-serialized DeleteRecord arrays
(hudi_format/kryo_deletes.py), against bytes Hudi 0.12.2's own SerializationUtils.serialize wrote
(called through py4j in a pyspark 3.3 session with hudi-spark3.3-bundle_2.12 0.12.2); the table
Hudi wrote and upgraded is adopted in tests/test_record_index_adoption.py."""

from __future__ import annotations

import struct

import pytest

from hudi_format import log_file
from hudi_format.errors import HudiFormatError
from hudi_format.kryo_deletes import deleted_records

VECTORS = {
    # DeleteRecord.create("k1", "p=a", 3) (py4j passes 3 as an Integer)
    "one_long3": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010201016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "0101703de1016bb10206",
        [('k1', 'p=a', 3)]),
    # two records, k1 and k5 in "p=a", ordering 3
    "two": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010301016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "0101703de1016bb1020601010101020101703de1016bb50206",
        [('k1', 'p=a', 3), ('k5', 'p=a', 3)]),
    # ordering Integer 0
    "int0": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010201016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "0101703de1016bb10200",
        [('k1', 'p=a', 0)]),
    # DeleteRecord.create("k1", "p=a"): no ordering value given
    "noorder": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010201016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "0101703de1016bb10200",
        [('k1', 'p=a', 0)]),
    # partition path null
    "nullpart": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010201016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "0100016bb10206",
        [('k1', None, 3)]),
    # partition path ""
    "emptypart": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010201016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "010181016bb10206",
        [('k1', '', 3)]),
    # one-character strings
    "onechar": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010201016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "0101826101826b0206",
        [('k', 'a', 3)]),
    # non-ASCII strings
    "unicode": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010201016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "010184703dc3bc01856bc3a979e29c930206",
        [('kéy✓', 'p=ü', 3)]),
    # a key of 70 characters
    "long": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010201016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "01017070f001c7016b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b"
        "6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b0206",
        [('kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk', 'ppp', 3)]),
    # a String ordering value
    "strord": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010201016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "01018270016bb103016162e3",
        [('k1', 'p', 'abc')]),
    # no records
    "empty": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb0101",
        []),
    # one HoodieKey object in two records (a back reference)
    "sharedkey": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010301016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "0101703de1016bb102000101010102040200",
        [('k1', 'p=a', 0), ('k1', 'p=a', 0)]),
    # ordering Long 0
    "long0": (
        "01005b4c6f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c6574655265636f72"
        "64bb010201016f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e44656c657465526563"
        "6f72e40101026f72672e6170616368652e687564692e636f6d6d6f6e2e6d6f64656c2e486f6f6469654b65f9"
        "0101703de1016bb10200",
        [('k1', 'p=a', 0)]),
}


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_hudi_serialized_delete_records_decode(name):
    data, want = VECTORS[name]
    assert deleted_records(bytes.fromhex(data)) == want


def _block(content: bytes) -> log_file.LogBlock:
    return log_file.LogBlock(log_file.DELETE, {}, struct.pack(">ii", 2, len(content)) + content)


def test_version_2_blocks_delete_keys_of_default_ordering_only():
    assert log_file.deleted_keys(_block(bytes.fromhex(VECTORS["int0"][0]))) == ["k1"]
    assert log_file.deleted_keys(_block(bytes.fromhex(VECTORS["long0"][0]))) == ["k1"]
    assert log_file.deleted_keys(_block(bytes.fromhex(VECTORS["sharedkey"][0]))) == ["k1", "k1"]
    with pytest.raises(HudiFormatError, match="orders its deletes by value"):
        log_file.deleted_keys(_block(bytes.fromhex(VECTORS["two"][0])))
    with pytest.raises(HudiFormatError, match="orders its deletes by value"):
        log_file.deleted_keys(_block(bytes.fromhex(VECTORS["strord"][0])))


@pytest.mark.parametrize("damage, why", [
    (lambda b: b[:-1], "cut short"),
    (lambda b: b + b"\x00", "bytes after the last DeleteRecord"),
    (lambda b: b[:3] + b"X" + b[4:], "where .* was expected"),
    (lambda b: b.replace(bytes.fromhex("0206"), bytes.fromhex("0c06")), "ordering value of class 10"),
])
def test_off_grammar_bytes_are_refused(damage, why):
    data = bytes.fromhex(VECTORS["one_long3"][0])
    with pytest.raises(HudiFormatError, match=why):
        deleted_records(damage(data))


def test_version_1_and_cut_short_blocks_are_refused():
    content = bytes.fromhex(VECTORS["int0"][0])
    with pytest.raises(HudiFormatError, match="version 1"):
        log_file.deleted_keys(log_file.LogBlock(log_file.DELETE, {}, struct.pack(">ii", 1, len(content)) + content))
    with pytest.raises(HudiFormatError, match="cut short"):
        log_file.deleted_keys(log_file.LogBlock(log_file.DELETE, {}, struct.pack(">ii", 2, len(content) + 5) + content))
