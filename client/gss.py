"""Kerberos through the system's GSS-API library (MIT's libgssapi_krb5, present wherever Kerberos
clients are), called with ctypes: nothing to compile, no Python package. Both ends of SASL GSSAPI:

* the client's initiator (`InitiateContext`): the user's credentials from the ticket cache (`kinit`,
  KRB5CCNAME) or the cache named by `ccache`;
* the server's acceptor (`AcceptorCredentials`, `AcceptContext`, used by adapter/security/sasl.py):
  credentials from a keytab for one service principal (gss_acquire_cred_from, MIT 1.11+, so the keytab
  is per server rather than process-wide), and the initiator's name;
* wrap/unwrap of the security-layer negotiation, on either end.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading

_GSS_C_INITIATE, _GSS_C_ACCEPT = 1, 2
_GSS_C_MUTUAL_FLAG, _GSS_C_SEQUENCE_FLAG = 2, 8
_GSS_C_GSS_CODE, _GSS_C_MECH_CODE = 1, 2
GSS_S_COMPLETE, GSS_S_CONTINUE_NEEDED = 0, 1
# GSS_KRB5_NT_PRINCIPAL_NAME 1.2.840.113554.1.2.2.1, GSS_C_NT_HOSTBASED_SERVICE 1.2.840.113554.1.2.1.4,
# the Kerberos V5 mechanism 1.2.840.113554.1.2.2
_KRB5_PRINCIPAL_OID = b"\x2a\x86\x48\x86\xf7\x12\x01\x02\x02\x01"
_HOSTBASED_OID = b"\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04"
_KRB5_MECH_OID = b"\x2a\x86\x48\x86\xf7\x12\x01\x02\x02"


class GssError(Exception):
    """A GSS-API call failed; str() is the library's own explanation (major and minor status)."""


class _Buffer(ctypes.Structure):
    _fields_ = [("length", ctypes.c_size_t), ("value", ctypes.c_void_p)]


class _Oid(ctypes.Structure):
    _fields_ = [("length", ctypes.c_uint32), ("elements", ctypes.c_void_p)]


class _KeyValue(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class _KeyValueSet(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint32), ("elements", ctypes.POINTER(_KeyValue))]


_lib = None
_lib_lock = threading.Lock()
_U32P = ctypes.POINTER(ctypes.c_uint32)
_VP = ctypes.c_void_p
_VPP = ctypes.POINTER(ctypes.c_void_p)
_BUFP = ctypes.POINTER(_Buffer)


def library():
    """The loaded GSS-API library; GssError when the system has none."""
    global _lib
    with _lib_lock:
        if _lib is None:
            name = ctypes.util.find_library("gssapi_krb5") or "libgssapi_krb5.so.2"
            try:
                lib = ctypes.CDLL(name)
            except OSError as exc:
                raise GssError(f"no GSS-API library ({name}): install MIT Kerberos' libgssapi-krb5 ({exc})") from None
            sigs = {
                "gss_import_name": [_U32P, _BUFP, ctypes.POINTER(_Oid), _VPP],
                "gss_release_name": [_U32P, _VPP],
                "gss_acquire_cred_from": [_U32P, _VP, ctypes.c_uint32, _VP, ctypes.c_int,
                                          ctypes.POINTER(_KeyValueSet), _VPP, _VPP, _U32P],
                "gss_release_cred": [_U32P, _VPP],
                "gss_init_sec_context": [_U32P, _VP, _VPP, _VP, ctypes.POINTER(_Oid), ctypes.c_uint32,
                                         ctypes.c_uint32, _VP, _BUFP, _VPP, _BUFP, _U32P, _U32P],
                "gss_accept_sec_context": [_U32P, _VPP, _VP, _BUFP, _VP, _VPP, _VPP, _BUFP, _U32P, _U32P, _VPP],
                "gss_delete_sec_context": [_U32P, _VPP, _BUFP],
                "gss_display_name": [_U32P, _VP, _BUFP, _VPP],
                "gss_display_status": [_U32P, ctypes.c_uint32, ctypes.c_int, _VP, _U32P, _BUFP],
                "gss_wrap": [_U32P, _VP, ctypes.c_int, ctypes.c_uint32, _BUFP, ctypes.POINTER(ctypes.c_int), _BUFP],
                "gss_unwrap": [_U32P, _VP, _BUFP, _BUFP, ctypes.POINTER(ctypes.c_int), _U32P],
                "gss_release_buffer": [_U32P, _BUFP],
            }
            for fn, args in sigs.items():
                f = getattr(lib, fn)
                f.argtypes, f.restype = args, ctypes.c_uint32
            _lib = lib
        return _lib


def _failed(major: int) -> bool:
    return bool(major & 0xFFFF0000)


def _status_text(major: int, minor: int) -> str:
    lib = library()
    parts = []
    for value, kind in ((major, _GSS_C_GSS_CODE), (minor, _GSS_C_MECH_CODE)):
        if kind == _GSS_C_MECH_CODE and not value:
            continue
        ctx = ctypes.c_uint32(0)
        for _ in range(8):
            m, buf = ctypes.c_uint32(), _Buffer()
            if _failed(lib.gss_display_status(ctypes.byref(m), value, kind, None, ctypes.byref(ctx),
                                              ctypes.byref(buf))):
                break
            parts.append(_take(buf).decode("utf-8", "replace"))
            if not ctx.value:
                break
    return ": ".join(p for p in parts if p) or f"GSS-API status {major:#x}/{minor}"


def _take(buf: _Buffer) -> bytes:
    """The buffer's bytes; the library's memory is released."""
    data = ctypes.string_at(buf.value, buf.length) if buf.value and buf.length else b""
    if buf.value:
        library().gss_release_buffer(ctypes.byref(ctypes.c_uint32()), ctypes.byref(buf))
    return data


def _check(major: int, minor: ctypes.c_uint32, what: str) -> None:
    if _failed(major):
        raise GssError(f"{what}: {_status_text(major, minor.value)}")


def _in(data: bytes) -> tuple[_Buffer, object]:
    keep = ctypes.create_string_buffer(data, len(data))
    return _Buffer(len(data), ctypes.cast(keep, ctypes.c_void_p)), keep


def _oid(data: bytes) -> tuple[_Oid, object]:
    keep = ctypes.create_string_buffer(data, len(data))
    return _Oid(len(data), ctypes.cast(keep, ctypes.c_void_p)), keep


class _Context:
    """What both ends do with an established context: the security layer's wrap and unwrap."""

    peer = "the peer"

    def __init__(self) -> None:
        self._ctx = ctypes.c_void_p()
        self.complete = False

    def wrap(self, data: bytes) -> bytes:
        lib = library()
        minor, out = ctypes.c_uint32(), _Buffer()
        inbuf, keep = _in(data)
        _check(lib.gss_wrap(ctypes.byref(minor), self._ctx, 0, 0, ctypes.byref(inbuf), None, ctypes.byref(out)),
               minor, "wrap")
        del keep
        return _take(out)

    def unwrap(self, data: bytes) -> bytes:
        lib = library()
        minor, out = ctypes.c_uint32(), _Buffer()
        inbuf, keep = _in(data)
        _check(lib.gss_unwrap(ctypes.byref(minor), self._ctx, ctypes.byref(inbuf), ctypes.byref(out), None, None),
               minor, f"{self.peer}'s security layer message")
        del keep
        return _take(out)

    def close(self) -> None:
        if self._ctx:
            library().gss_delete_sec_context(ctypes.byref(ctypes.c_uint32()), ctypes.byref(self._ctx), None)
            self._ctx = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class InitiateContext(_Context):
    """A security context with the service `target`: a principal `hive/host@REALM`, or without a
    realm `hive/host` (the host-based service name `hive@host`)."""

    def __init__(self, target: str, ccache: str | None = None):
        lib = library()
        self.target = target
        minor = ctypes.c_uint32()
        self._name = ctypes.c_void_p()
        self._cred = ctypes.c_void_p()
        super().__init__()
        if "@" in target:
            text, oid_bytes = target, _KRB5_PRINCIPAL_OID
        else:
            service, _, host = target.partition("/")
            text, oid_bytes = (f"{service}@{host}" if host else service), _HOSTBASED_OID
        buf, keep = _in(text.encode())
        oid, keep_oid = _oid(oid_bytes)
        _check(lib.gss_import_name(ctypes.byref(minor), ctypes.byref(buf), ctypes.byref(oid), ctypes.byref(self._name)),
               minor, f"the service principal {target}")
        del keep, keep_oid
        if ccache:
            elems = (_KeyValue * 1)(_KeyValue(b"ccache", ccache.encode()))
            store = _KeyValueSet(1, elems)
            _check(lib.gss_acquire_cred_from(ctypes.byref(minor), None, 0, None, _GSS_C_INITIATE, ctypes.byref(store),
                                             ctypes.byref(self._cred), None, None),
                   minor, f"the ticket cache {ccache}")

    def step(self, token: bytes | None) -> bytes:
        """Feed the acceptor's token (None at first); the token to send (possibly empty)."""
        lib = library()
        minor = ctypes.c_uint32()
        mech, keep_mech = _oid(_KRB5_MECH_OID)
        inbuf, keep = _in(token or b"")
        out = _Buffer()
        major = lib.gss_init_sec_context(ctypes.byref(minor), self._cred or None, ctypes.byref(self._ctx), self._name,
                                         ctypes.byref(mech), _GSS_C_MUTUAL_FLAG | _GSS_C_SEQUENCE_FLAG, 0, None,
                                         ctypes.byref(inbuf) if token is not None else None, None, ctypes.byref(out),
                                         None, None)
        del keep, keep_mech
        reply = _take(out)
        _check(major, minor, f"log-in to {self.target}")
        if major & 0xFFFF == GSS_S_COMPLETE:
            self.complete = True
        return reply

    peer = "the server"

    def close(self) -> None:
        super().close()
        lib = library()
        if self._cred:
            lib.gss_release_cred(ctypes.byref(ctypes.c_uint32()), ctypes.byref(self._cred))
            self._cred = ctypes.c_void_p()
        if self._name:
            lib.gss_release_name(ctypes.byref(ctypes.c_uint32()), ctypes.byref(self._name))
            self._name = ctypes.c_void_p()


class AcceptorCredentials:
    """A service principal's long-term key from a keytab, to accept contexts with."""

    def __init__(self, principal: str, keytab: str):
        lib = library()
        minor = ctypes.c_uint32()
        name = ctypes.c_void_p()
        buf, keep = _in(principal.encode())
        oid_bytes = ctypes.create_string_buffer(_KRB5_PRINCIPAL_OID, len(_KRB5_PRINCIPAL_OID))
        oid = _Oid(len(_KRB5_PRINCIPAL_OID), ctypes.cast(oid_bytes, ctypes.c_void_p))
        _check(lib.gss_import_name(ctypes.byref(minor), ctypes.byref(buf), ctypes.byref(oid), ctypes.byref(name)),
               minor, f"principal {principal}")
        try:
            elems = (_KeyValue * 1)(_KeyValue(b"keytab", keytab.encode()))
            store = _KeyValueSet(1, elems)
            self._cred = ctypes.c_void_p()
            _check(lib.gss_acquire_cred_from(ctypes.byref(minor), name, 0, None, _GSS_C_ACCEPT, ctypes.byref(store),
                                             ctypes.byref(self._cred), None, None),
                   minor, f"the key of {principal} in keytab {keytab}")
        finally:
            lib.gss_release_name(ctypes.byref(ctypes.c_uint32()), ctypes.byref(name))
        del keep

    @property
    def handle(self) -> ctypes.c_void_p:
        return self._cred

    def close(self) -> None:
        if self._cred:
            library().gss_release_cred(ctypes.byref(ctypes.c_uint32()), ctypes.byref(self._cred))
            self._cred = ctypes.c_void_p()


class AcceptContext(_Context):
    """One client's security context, accepted step by step."""

    peer = "the client"

    def __init__(self, creds: AcceptorCredentials):
        super().__init__()
        self.creds = creds
        self.initiator: str | None = None

    def step(self, token: bytes) -> bytes:
        """Feed the initiator's token; returns the token to send back (possibly empty)."""
        lib = library()
        minor, src, flags = ctypes.c_uint32(), ctypes.c_void_p(), ctypes.c_uint32()
        inbuf, keep = _in(token)
        out = _Buffer()
        major = lib.gss_accept_sec_context(ctypes.byref(minor), ctypes.byref(self._ctx), self.creds.handle,
                                           ctypes.byref(inbuf), None, ctypes.byref(src), None, ctypes.byref(out),
                                           ctypes.byref(flags), None, None)
        del keep
        reply = _take(out)
        try:
            _check(major, minor, "Kerberos authentication failed")
            if major & 0xFFFF == GSS_S_COMPLETE:
                self.complete = True
                name = _Buffer()
                _check(lib.gss_display_name(ctypes.byref(minor), src, ctypes.byref(name), None), minor,
                       "the client's principal")
                self.initiator = _take(name).decode("utf-8", "replace")
        finally:
            if src:
                lib.gss_release_name(ctypes.byref(ctypes.c_uint32()), ctypes.byref(src))
        return reply
