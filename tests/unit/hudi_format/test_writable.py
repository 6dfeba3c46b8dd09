"""Hadoop's Writable encodings (hudi_format/writable.py): variable-length longs, Text, Token strings."""

import base64
import io

import pytest

from hudi_format import writable


def test_hadoop_variable_length_integers_round_trip():
    for n in (0, 1, -1, 127, 128, -112, -113, 255, 256, 65535, 2**31 - 1, -2**31, 1_700_000_000_000, 2**63 - 1, -2**63):
        assert writable.read_vlong(io.BytesIO(writable.vlong(n))) == n, n
    # Hadoop's encodings of a few values (WritableUtils.writeVLong)
    assert writable.vlong(127) == b"\x7f" and writable.vlong(128) == b"\x8f\x80" and writable.vlong(-113) == b"\x87\x70"


def test_text_round_trip_and_truncation():
    out = io.BytesIO()
    writable.write_text(out, "héllo")
    assert writable.read_text(io.BytesIO(out.getvalue())) == "héllo"
    with pytest.raises(ValueError):
        writable.read_text(io.BytesIO(out.getvalue()[:-1]))
    with pytest.raises(ValueError):
        writable.read_vlong(io.BytesIO(b""))


def test_token_strings():
    text = writable.encode_token(b"\x00id", b"pw", "HIVE_DELEGATION_TOKEN", "svc")
    assert "=" not in text
    assert writable.decode_token(text) == (b"\x00id", b"pw", "HIVE_DELEGATION_TOKEN")
    bare = io.BytesIO()
    writable.write_bytes(bare, b"id")
    writable.write_bytes(bare, b"pw")
    assert writable.decode_token(base64.urlsafe_b64encode(bare.getvalue()).decode()) == (b"id", b"pw", None)
    with pytest.raises(ValueError):
        writable.decode_token(base64.urlsafe_b64encode(b"\x05ab").decode())
