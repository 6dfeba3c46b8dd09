"""The arguments of one request, decoded again when their text may be no UTF-8
(adapter/request_text.py: Thrift's C decoder replaced such bytes by U+FFFD, its Python decoder
raised UnicodeDecodeError in the middle of the arguments, where the rest of the message cannot be
found). The bytes of the arguments are kept while they are decoded, up to `LIMIT` (larger requests
are not decoded again); `rewind` sets the transport back to their start, so that they are decoded
again with adapter/request_text.LenientProtocol, the call is answered with the exception it
declares, and the connection goes on.
"""

from __future__ import annotations

import io

from adapter.server.transport import BufferedTransport, LimitedFramedTransport

LIMIT = 1024 * 1024  # bytes of arguments kept per request


class Replay:
    def __init__(self, itrans):
        self.itrans = itrans
        self.frame = None
        self.start = 0
        if isinstance(itrans, LimitedFramedTransport):  # the frame holds the whole message
            self.frame = itrans._TFramedTransport__rbuf
            self.start = self.frame.tell()
        else:  # what the buffer holds, then what the socket gives
            rbuf = itrans._TBufferedTransport__rbuf
            with rbuf.getbuffer() as view:
                itrans.sock.tape = bytearray(view[rbuf.tell():])
            itrans.sock.tape_limit = LIMIT

    @classmethod
    def start_for(cls, itrans) -> Replay | None:
        """Start keeping the arguments' bytes (right after the message header was read)."""
        if isinstance(itrans, (BufferedTransport, LimitedFramedTransport)):
            return cls(itrans)
        return None

    def possible(self) -> bool:
        if self.frame is not None:
            return self.itrans._TFramedTransport__rbuf is self.frame
        return self.itrans.sock.tape is not None

    def rewind(self) -> bool:
        """Set the transport back to the start of the arguments; False when that is not possible
        (more than LIMIT bytes, another frame read)."""
        if not self.possible():
            self.stop()
            return False
        if self.frame is not None:
            self.frame.seek(self.start)
            return True
        tape = self.itrans.sock.tape
        self.stop()
        self.itrans._TBufferedTransport__rbuf = io.BytesIO(bytes(tape))
        return True

    def stop(self) -> None:
        if self.frame is None:
            self.itrans.sock.tape = None
