"""Delete blocks of Hudi before 0.14 (log block version 2): the content after the version and
length is a `DeleteRecord[]` serialized with Kryo 4 as Hudi's SerializationUtils configures it
(classes unregistered and written by name, references on, FieldSerializer: fields in name order).
Checked against Hudi 0.12.2's writer (tests/fixtures/hudi-tables/mor_v6_kryo_delete_blocks.zip, read back by
Hudi 0.15.0) and its SerializationUtils (tests/unit/hudi_format/test_kryo_delete_blocks.py).

The grammar read here, and nothing else (anything off it is refused, never guessed):
  array   := class("[Lorg.apache.hudi.common.model.DeleteRecord;") ref varint(n + 1) record{n}
  record  := class("...DeleteRecord") (ref-new key ordering | back reference to a record)
  key     := class("...HoodieKey") (ref-new string string | back reference to a key)
             (the fields in name order: hoodieKey, orderingVal; partitionPath, recordKey)
  ordering:= class(null) | class(int) zigzag-varint | class(long) zigzag-varlong | class(String) string
  string  := ref-or-null (new: Kryo string; back reference: a string read before)
A class is varint 0 (null), 1 + varint name id [+ name, the first time], or registered id + 2
(Kryo's defaults: 0 int, 1 String, 7 long). A reference is 0 null, 1 new object, id + 2 an object
written before (ids count objects in write order, arrays and records included).
"""

from __future__ import annotations

from hudi_format.errors import HudiFormatError

ARRAY = "[Lorg.apache.hudi.common.model.DeleteRecord;"
RECORD = "org.apache.hudi.common.model.DeleteRecord"
KEY = "org.apache.hudi.common.model.HoodieKey"
_INT, _STRING, _LONG = 0, 1, 7
_NEW = object()


class _Reader:
    def __init__(self, data: bytes, name: str):
        self.d, self.p, self.name = data, 0, name
        self.names: dict[int, str] = {}
        self.objects: list[object] = []

    def fail(self, what: str) -> HudiFormatError:
        return HudiFormatError(f"{self.name}: Kryo delete block: {what} at byte {self.p}")

    def byte(self) -> int:
        if self.p >= len(self.d):
            raise self.fail("cut short")
        b = self.d[self.p]
        self.p += 1
        return b

    def varint(self, limit: int = 5) -> int:
        n = shift = 0
        for _ in range(limit):
            b = self.byte()
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7
        raise self.fail("varint too long")

    def zigzag(self, limit: int) -> int:
        n = self.varint(limit)
        return (n >> 1) ^ -(n & 1)

    def text(self) -> str | None:
        """Kryo's Output.writeString: ASCII with the last byte's high bit set, or a UTF-8 length
        (length + 1; 0 null, 1 empty) and the chars (UTF-16 units, 1 to 3 bytes each)."""
        b = self.byte()
        if not b & 0x80:
            out = bytearray([b])
            while not b & 0x80:
                b = self.byte()
                out.append(b & 0x7F)
            return out.decode("ascii")
        length, shift = b & 0x3F, 6
        more = b & 0x40
        while more:
            b = self.byte()
            length |= (b & 0x7F) << shift
            more, shift = b & 0x80, shift + 7
            if shift > 34:
                raise self.fail("string length too long")
        if length == 0:
            return None
        units = []
        for _ in range(length - 1):
            b = self.byte()
            if b < 0x80:
                units.append(b)
            elif b >> 5 == 0b110:
                units.append((b & 0x1F) << 6 | self.byte() & 0x3F)
            elif b >> 4 == 0b1110:
                units.append((b & 0x0F) << 12 | (self.byte() & 0x3F) << 6 | self.byte() & 0x3F)
            else:
                raise self.fail("bad char in a string")
        return "".join(map(chr, units)).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")

    def klass(self) -> str | int | None:
        """A class: its name, its registered id, or None (a null value)."""
        v = self.varint()
        if v == 0:
            return None
        if v == 1:
            name_id = self.varint()
            if name_id not in self.names:
                name = self.text()
                if not name:
                    raise self.fail("class without a name")
                self.names[name_id] = name
            return self.names[name_id]
        return v - 2

    def reference(self) -> object:
        """_NEW for a new object (the caller appends it), None for null, else the object."""
        v = self.varint()
        if v == 0:
            return None
        if v == 1:
            return _NEW
        if v - 2 >= len(self.objects):
            raise self.fail(f"reference to object {v - 2}, of {len(self.objects)} read")
        return self.objects[v - 2]

    def expect(self, want: str) -> None:
        got = self.klass()
        if got != want:
            raise self.fail(f"{got!r} where {want} was expected")

    def string(self) -> str | None:
        ref = self.reference()
        if ref is None:
            return None
        if ref is _NEW:
            s = self.text()
            self.objects.append(s)
            return s
        if not isinstance(ref, str):
            raise self.fail("reference to a non-string where a string was expected")
        return ref

    def ordering(self) -> object:
        cls = self.klass()
        if cls is None:
            return None
        if cls == _INT:
            return self.zigzag(5)
        if cls == _LONG:
            return self.zigzag(10)
        if cls == _STRING:
            return self.string()
        raise self.fail(f"ordering value of class {cls!r} (int, long and String are read)")


class _Record:
    value: tuple = ()


class _Key:
    value: tuple = ()


def deleted_records(data: bytes, name: str = "log file") -> list[tuple[str | None, str | None, object]]:
    """(record key, partition path, ordering value) of each DeleteRecord, in order."""
    r = _Reader(data, name)
    r.expect(ARRAY)
    if r.reference() is not _NEW:
        raise r.fail("the array is not a new object")
    r.objects.append(ARRAY)
    count = r.varint() - 1
    if count < 0:
        raise r.fail("null array")
    out: list[tuple[str | None, str | None, object]] = []
    for _ in range(count):
        r.expect(RECORD)
        ref = r.reference()
        if isinstance(ref, _Record):  # the same DeleteRecord twice
            out.append(ref.value)
            continue
        if ref is not _NEW:
            raise r.fail("a DeleteRecord that is neither new nor one read before")
        record = _Record()
        r.objects.append(record)
        r.expect(KEY)
        ref = r.reference()
        if isinstance(ref, _Key):  # a HoodieKey shared by two records
            key, partition = ref.value
        elif ref is _NEW:
            hoodie_key = _Key()
            r.objects.append(hoodie_key)
            partition = r.string()
            key = r.string()
            hoodie_key.value = (key, partition)
        else:
            raise r.fail("a HoodieKey that is neither new nor one read before")
        record.value = (key, partition, r.ordering())
        out.append(record.value)
    if r.p != len(data):
        raise r.fail(f"{len(data) - r.p} bytes after the last DeleteRecord")
    return out
