"""Post-process generated Python bindings (run by generate.sh).

SkewedInfo.skewedColValueLocationMaps is map<list<string>, string>. Stock
Thrift Python code decodes each key as a list, which is unhashable, so any
non-empty map crashes the decoder. We make both decoders produce tuples:

* pure Python ``SkewedInfo.read()``: wrap the key in ``tuple(...)``;
* C extension (fastbinary / TBinaryProtocolAccelerated, also the compact
  one): it decodes from ``thrift_spec``, where the third element of a
  list type spec is the "immutable" flag; when it is True the extension
  builds a tuple instead of a list. Flip it for the key spec only.

Writers iterate the key as a sequence, so tuple keys encode unchanged.

Exceptions: thrift 0.17 generates them immutable, refusing even the attributes
Python itself sets while an exception travels (``__traceback__`` from
contextlib, ``__cause__``, ``__context__``, ``__notes__``). We let dunder
attributes through, as newer Thrift compilers do; fields stay immutable.
"""

import re
import sys

MARKER = "#  post-processed by thrift_idl/patch_bindings.py (SkewedInfo tuple keys)\n"

SPEC_OLD = ("(3, TType.MAP, 'skewedColValueLocationMaps', "
            "(TType.LIST, (TType.STRING, 'UTF8', False), TType.STRING, 'UTF8', False)")
SPEC_NEW = ("(3, TType.MAP, 'skewedColValueLocationMaps', "
            "(TType.LIST, (TType.STRING, 'UTF8', True), TType.STRING, 'UTF8', False)")

READ_RE = re.compile(r"(self\.skewedColValueLocationMaps\[)(_key\d+)(\] = )")


EXC_SETATTR_OLD = """    def __setattr__(self, *args):
        raise TypeError("can't modify immutable instance")
"""
EXC_SETATTR_NEW = """    def __setattr__(self, *args):
        if args[0].startswith("__"):  # set by Python while raising (traceback, cause, notes)
            return super().__setattr__(*args)
        raise TypeError("can't modify immutable instance")
"""


def patch_exceptions(text):
    return text.replace(EXC_SETATTR_OLD, EXC_SETATTR_NEW)


def patch(text):
    if MARKER in text:
        return text  # already patched
    if text.count(SPEC_OLD) != 1:
        raise SystemExit("patch_bindings: SkewedInfo thrift_spec entry not found exactly once")
    text = text.replace(SPEC_OLD, SPEC_NEW)
    text, n = READ_RE.subn(r"\1tuple(\2)\3", text)
    if n != 1:
        raise SystemExit(f"patch_bindings: SkewedInfo.read() map insert found {n} times, expected 1")
    anchor = "#  options string: py\n"
    if anchor not in text:
        raise SystemExit("patch_bindings: generated header not recognised")
    return patch_exceptions(text.replace(anchor, anchor + MARKER, 1))


def main(args):
    # --exceptions-only: bindings without SkewedInfo (hudi_metastore/ttypes.py) get the
    # exception fix alone.
    fix = patch_exceptions if args[:1] == ["--exceptions-only"] else patch
    for path in args[1:] if fix is patch_exceptions else args:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(fix(text))


if __name__ == "__main__":
    main(sys.argv[1:])
