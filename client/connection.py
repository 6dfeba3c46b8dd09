"""The connection of the Python client: one metastore connection per client object, reconnects,
retries and the session, and every metastore call passed through with Thrift arguments.

Connection. One connection per client object, opened on first use and reused; calls from several
threads are serialized by a lock (use one client per thread for parallel calls). Before reusing the
connection the client checks that the server has not closed it (a restarted server) and reconnects
if so. ``close()`` or ``with`` ends it. ``uri`` may list several metastores,
``"thrift://a:9083,thrift://b:9083"``: a (re)connect tries them in order.

Retries. On a transport failure (connection refused/reset, EOF, socket timeout) the connection is
dropped and the call is retried, up to ``retries`` times with exponential backoff
(``backoff_s * 2**attempt``, capped at ``max_backoff_s``, with jitter), under this rule:

* a failure *before any byte of the request was written* (connecting, or restoring the session)
  is retried for every call: the server cannot have seen it;
* once the request may have reached the server, the call is retried only if it is idempotent:
  reads (``get_*``, ``list_instants``, ...), ``heartbeat_instant``, ``add_markers``, HMS reads and
  lock heartbeats, and the session calls ``set_ugi`` / ``setMetaConf``. Anything else
  (``create_instant``, ``complete_instant``, ``new_instant_time``, ``create_table``, ``lock``, ...)
  raises the transport error: it may or may not have happened, and only the caller can tell
  (e.g. ``list_instants`` to see whether the instant completed).

Failover. A server whose database cannot be used (down, unreachable, a Galera node cut off from its
cluster) answers MetaException "... the metastore database is unavailable from this metastore
server; nothing was changed ...": the client then drops the connection, moves that server to the
end of its list and runs the call again (any call: it changed nothing), within ``retries``. With
several URIs the next attempt goes to the next server.

Session. ``set_ugi`` and ``setMetaConf`` are per connection on the server; the client remembers them
and replays them on every reconnect.

Security. ``security`` (client/security.py): TLS, then a SASL log-in (password, Kerberos, a
delegation token) on every connection, after which messages are framed. A refused log-in, a
certificate that is not trusted, or a server that requires authentication or TLS the client was not
given raise AuthenticationError at once (never retried: the server counts failed log-ins).
``connect_retries`` bounds the retries while no connection was ever made (a wrong port fails fast
with 0; None: as ``retries``).
"""

from __future__ import annotations

import contextlib
import random
import select
import socket
import ssl
import threading
import time
from typing import Self
from urllib.parse import urlsplit

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.Thrift import TApplicationException
from thrift.transport import TSocket, TTransport
from thrift.transport.TTransport import TTransportException

from thrift_idl.hudi_metastore import HudiMetastore

from .errors import AuthenticationError
from .security import Security, handshake, wrap_tls

__all__ = ["Connection", "database_unavailable", "is_idempotent", "metastore_endpoints"]

# Extension calls safe to repeat.
_IDEMPOTENT_HUDI = frozenset({
    "get_hudi_table", "list_instants", "get_instant_metadata", "get_failed_instants", "get_hudi_partitions",
    "get_latest_file_slices", "get_files_changed", "get_all_files", "heartbeat_instant", "add_markers",
    "import_hudi_instants",  # the server leaves what it has already alone
    "lookup_record_keys", "prune_file_slices", "list_files_without_column_stats",
    "load_column_stats",  # files that have statistics keep them
})
# HMS / fb303 calls safe to repeat besides get_*.
_IDEMPOTENT_HMS = frozenset({
    "getMetaConf", "setMetaConf", "set_ugi", "getName", "getVersion", "getStatus", "getStatusDetails",
    "getCounters", "getCounter", "getOption", "getOptions", "aliveSince", "partition_name_to_vals",
    "partition_name_to_spec", "partition_name_has_valid_characters", "isPartitionMarkedForEvent",
    "list_roles", "list_privileges", "show_locks", "heartbeat", "heartbeat_txn_range",
})
_SESSION_CALLS = ("set_ugi", "setMetaConf")
# The text of a server's answer that its database is unavailable and nothing was changed (the
# server's adapter/errors.py DATABASE_UNAVAILABLE; tests/unit/client/test_failover.py keeps them equal).
DATABASE_UNAVAILABLE = "the metastore database is unavailable"
# What a dead connection looks like from here.
_TRANSPORT_ERRORS = (TTransportException, OSError, EOFError)


def _refusal(exc: TApplicationException) -> tuple[str, str] | None:
    """What the server's unsolicited answer to an unauthenticated or plaintext client says is missing."""
    text = str(exc)
    if "requires authentication" in text:
        return "authentication", ("requires authentication (SASL) and this client has none "
                                  "(security=Security(auth='password' or 'kerberos'))")
    if "accepts TLS connections only" in text:
        return "tls", "accepts TLS connections only and this client has no TLS (security=Security(tls_ca=...))"
    return None


def _tls_refusal(exc: BaseException) -> str | None:
    """The TLS alert a server sent to refuse this client, if that is what `exc` is."""
    inner = getattr(exc, "inner", None) or exc
    if not isinstance(inner, ssl.SSLError) or "ALERT" not in str(inner).upper():
        return None
    why = inner.reason or str(inner)
    if "CERTIFICATE_REQUIRED" in str(inner).upper():
        return f"refused the TLS connection ({why}): it wants a client certificate (tls_cert, tls_key)"
    return f"refused the TLS connection ({why})"


def database_unavailable(exc: BaseException) -> bool:
    """Is `exc` a server's answer that its database is unavailable and nothing was changed?"""
    text = getattr(exc, "message", None)
    return isinstance(text, str) and DATABASE_UNAVAILABLE in text and "nothing was changed" in text


def is_idempotent(method: str) -> bool:
    """Whether `method` may be retried after its request may have reached the server."""
    return method.startswith("get_") or method in _IDEMPOTENT_HUDI or method in _IDEMPOTENT_HMS


def metastore_endpoints(uri: str) -> list[tuple[str, int]]:
    """(host, port) of each metastore of `uri` ("thrift://a:9083,thrift://b:9083"); ValueError if malformed."""
    out = []
    for part in (p.strip() for p in uri.split(",")):
        if not part:
            continue
        u = urlsplit(part if "://" in part else f"thrift://{part}")
        if u.scheme != "thrift" or not u.hostname:
            raise ValueError(f"not a metastore URI (thrift://host:port): {part!r}")
        out.append((u.hostname, u.port or 9083))
    if not out:
        raise ValueError("no metastore URI given")
    return out


class _SendStarted(Exception):
    """Internal marker: the failure happened after the request started going out."""

    def __init__(self, cause: BaseException):
        super().__init__(str(cause))
        self.cause = cause


class Connection:
    """A metastore connection: `call(name, *args)` and every method of the generated
    HudiMetastore.Client (Thrift arguments and answers) as attributes."""

    def __init__(self, uri: str = "thrift://127.0.0.1:9083", timeout_s: float = 60, retries: int = 3,
                 framed: bool = False, backoff_s: float = 0.2, max_backoff_s: float = 5.0,
                 security: Security | None = None, connect_retries: int | None = None):
        self.uri = uri
        self.endpoints = metastore_endpoints(uri)
        self.timeout_s = timeout_s
        self.retries = max(0, int(retries))
        self.connect_retries = self.retries if connect_retries is None else max(0, int(connect_retries))
        self.security = security or Security()
        self.framed = framed or self.security.sasl  # after a SASL log-in, messages are frames
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._lock = threading.RLock()
        self._transport = None
        self._socket: TSocket.TSocket | None = None
        self._client: HudiMetastore.Client | None = None
        self._session: dict[tuple, tuple] = {}  # replayed on reconnect, in insertion order
        self._closed = False
        self._endpoint = ""
        self.connections_opened = 0  # how many connections this client made (observability, tests)
        self.retried_calls = 0

    # --- lifecycle --------------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._drop()

    @contextlib.contextmanager
    def waiting(self, seconds: float):
        """Calls made inside wait up to `seconds` for their answers when that is longer than the
        connection's timeout (a commit of millions of keys); the connection is this thread's
        meanwhile."""
        with self._lock:
            before = self.timeout_s
            longer = bool(before) and seconds > before
            if longer:
                self._set_timeout(seconds)
            try:
                yield self
            finally:
                if longer:
                    self._set_timeout(before)

    def _set_timeout(self, seconds: float) -> None:
        self.timeout_s = seconds
        if self._socket is not None:
            self._socket.setTimeout(int(seconds * 1000) if seconds else None)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # best effort; close() is the way
        try:
            self._drop()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.uri!r}, connected={self._transport is not None})"

    # --- calls ------------------------------------------------------------------------------------

    def call(self, method: str, *args, idempotent: bool | None = None, **kwargs):
        """Call `method` with Thrift arguments, reconnecting and retrying as the module doc says."""
        if not hasattr(HudiMetastore.Client, "send_" + method):
            raise AttributeError(f"the metastore has no method {method!r}")
        retry_sent = is_idempotent(method) if idempotent is None else idempotent
        attempt = 0
        with self._lock:
            if self._closed:
                raise TTransportException(TTransportException.NOT_OPEN, "client is closed")
            while True:
                try:
                    result = self._attempt(method, args, kwargs)
                except _SendStarted as exc:
                    self._drop()
                    if not retry_sent or attempt >= self.retries:
                        raise exc.cause from None
                except _TRANSPORT_ERRORS:  # connecting: the request never left
                    self._drop()
                    if attempt >= (self.retries if self.connections_opened else self.connect_retries):
                        raise
                except Exception as exc:
                    if not database_unavailable(exc) or attempt >= self.retries:
                        raise
                    self._fail_over()
                else:
                    if method in _SESSION_CALLS:
                        self._remember(method, args, kwargs)
                    return result
                self.retried_calls += 1
                time.sleep(self._backoff(attempt))
                attempt += 1

    def __getattr__(self, name):
        if name.startswith("_") or not hasattr(HudiMetastore.Client, "send_" + name):
            raise AttributeError(name)

        def passthrough(*args, **kwargs):
            return self.call(name, *args, **kwargs)

        passthrough.__name__ = name
        passthrough.__doc__ = getattr(HudiMetastore.Client, name).__doc__
        return passthrough

    def _pending_tls_alert(self) -> str | None:
        """After a send or read failed on TLS: the refusal the server sent before it closed, still
        waiting to be read (the close can fail this side's send first, with a reset)."""
        handle = getattr(self._socket, "handle", None)
        if not isinstance(handle, ssl.SSLSocket):
            return None
        try:
            handle.settimeout(0.5)
            handle.recv(1)
        except (ssl.SSLError, OSError) as exc:
            return _tls_refusal(exc)
        return None

    def _attempt(self, method, args, kwargs):
        client = self._connection()  # transport errors here: nothing of this call was sent
        try:
            getattr(client, "send_" + method)(*args, **kwargs)
            recv = getattr(client, "recv_" + method, None)
            return recv() if recv is not None else None  # oneway calls have no answer
        except _TRANSPORT_ERRORS as exc:
            refused = _tls_refusal(exc) or self._pending_tls_alert()
            if refused is not None:  # (TLS 1.3: a server's refusal of the client comes after the handshake)
                self._drop()
                raise AuthenticationError(f"metastore {self._endpoint}: {refused}") from None
            raise _SendStarted(exc) from exc
        except TApplicationException as exc:
            refusal = _refusal(exc)
            if refusal is not None:
                self._drop()
                raise AuthenticationError(f"metastore {self._endpoint}: {refusal[1]}", refusal[0]) from None
            if not self._answer_complete():
                self._drop()
            raise
        except Exception:
            # A protocol error mid-answer leaves the stream unusable; a Thrift exception the server
            # answered (NoSuchObjectException, TApplicationException) leaves it clean.
            if not self._answer_complete():
                self._drop()
            raise

    def _fail_over(self) -> None:
        """Drop the connection and put its server last: the next connect tries the others first."""
        current = self._endpoint
        self._drop()
        self.endpoints.sort(key=lambda e: f"thrift://{e[0]}:{e[1]}" == current)  # stable: the rest keep their order

    def _backoff(self, attempt: int) -> float:
        delay = min(self.max_backoff_s, self.backoff_s * (2 ** attempt))
        return delay * (0.5 + random.random() / 2)

    def _remember(self, method, args, kwargs) -> None:
        key = (method, args[0] if method == "setMetaConf" and args else kwargs.get("key"))
        self._session.pop(key, None)
        self._session[key] = (args, kwargs)

    # --- connection -------------------------------------------------------------------------------

    def _connection(self) -> HudiMetastore.Client:
        if self._client is not None and self._stale():
            self._drop()
        if self._client is None:
            self._open()
        return self._client

    def _open(self) -> None:
        last: BaseException | None = None
        for host, port in self.endpoints:
            sock = TSocket.TSocket(host, port)
            sock.setTimeout(int(self.timeout_s * 1000) if self.timeout_s else None)
            transport = TTransport.TFramedTransport(sock) if self.framed else TTransport.TBufferedTransport(sock)
            try:  # (not TSocket.open, which logs an error for each attempt: the caller hears it once)
                sock.setHandle(socket.create_connection((host, port), timeout=self.timeout_s or None))
            except OSError as exc:
                last = TTransportException(TTransportException.NOT_OPEN, f"cannot connect to the metastore "
                                           f"thrift://{host}:{port}: {exc.strerror or exc}")
                continue
            try:
                sock.handle.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
            try:
                self._secure(sock, host, port)
            except BaseException:
                sock.close()
                raise
            self._socket, self._transport = sock, transport
            self._endpoint = f"thrift://{host}:{port}"
            self._client = HudiMetastore.Client(TBinaryProtocolAccelerated(transport))
            self.connections_opened += 1
            try:
                for (method, _key), (args, kwargs) in list(self._session.items()):
                    getattr(self._client, method)(*args, **kwargs)
            except Exception:
                self._drop()
                raise
            return
        raise last if last is not None else TTransportException(TTransportException.NOT_OPEN, "no endpoint")

    def _secure(self, sock: TSocket.TSocket, host: str, port: int) -> None:
        """TLS and the SASL log-in on a new connection, as `security` says."""
        where = f"thrift://{host}:{port}"
        sec = self.security
        if sec.uses_tls:
            try:
                sock.setHandle(wrap_tls(sock.handle, host, sec))
            except ssl.SSLCertVerificationError as exc:
                raise AuthenticationError(f"metastore {where}: its TLS certificate is not trusted: "
                                          f"{exc.verify_message or exc} (give its CA: tls_ca)") from None
            except ssl.SSLError as exc:
                raise AuthenticationError(f"metastore {where}: the TLS handshake failed: {exc.reason or exc} "
                                          "(does it serve TLS? serve --tls-cert)") from None
            except (ConnectionError, TimeoutError) as exc:
                raise AuthenticationError(f"metastore {where}: the TLS handshake failed: the server closed "
                                          f"the connection ({exc}; does it serve TLS, or want a client "
                                          "certificate?)") from None
        if sec.sasl:
            try:
                handshake(sock.handle, host, sec)
            except AuthenticationError as exc:
                raise AuthenticationError(f"metastore {where}: {exc.message}", exc.needs) from None
            except (ConnectionError, TimeoutError, ssl.SSLError) as exc:
                raise AuthenticationError(f"metastore {where}: the SASL log-in failed: {exc}") from None

    def _stale(self) -> bool:
        """An idle connection with something to read was closed (or garbled) by the server."""
        handle = getattr(self._socket, "handle", None)
        if handle is None:
            return True
        if not self._answer_complete():
            return True
        try:
            readable, _, errored = select.select([handle], [], [handle], 0)
        except (OSError, ValueError):
            return True
        return bool(readable or errored)

    def _answer_complete(self) -> bool:
        """No unread bytes buffered (the last answer was read entirely)."""
        t = self._transport
        for attr in ("_TBufferedTransport__rbuf", "_TFramedTransport__rbuf"):
            buf = getattr(t, attr, None)
            if buf is not None and buf.tell() < len(buf.getvalue()):
                return False
        return True

    def _drop(self) -> None:
        transport, self._transport, self._socket, self._client = self._transport, None, None, None
        if transport is not None:
            try:
                transport.close()
            except (OSError, TTransportException):
                pass
