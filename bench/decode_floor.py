"""The client's share of a partition list: how long the benchmark's Python client takes to decode a
get_partitions answer of N partitions (TBinaryProtocolAccelerated, as in bench.run), with no server
at all. A server answering in zero time still costs this much per call, which bounds the ratio
reference/ours that any server can reach on getPartitions.N and getPartitionsByNames.N.

    python -m bench.decode_floor [--n 1000,10000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from thrift.protocol import TBinaryProtocol
from thrift.transport import TTransport

from bench import workload as w
from thrift_idl.hive_metastore import ThriftHiveMetastore as T


def answer_bytes(n: int) -> bytes:
    """A get_partitions answer shaped like the benchmark's table (5 columns, 3 keys), with the
    location and parameter a metastore fills in."""
    tbl = w.table(w.BENCH_DB, "t")
    parts = []
    for i in range(n):
        p = w.partition(tbl, w.flat_values(i))
        p.sd.location = f"file:/tmp/warehouse/bench.db/t/{w.flat_name(i)}"
        p.parameters = {"transient_lastDdlTime": "1763800000"}
        parts.append(p)
    buf = TTransport.TMemoryBuffer()
    T.get_partitions_result(success=parts).write(TBinaryProtocol.TBinaryProtocolAccelerated(buf))
    return buf.getvalue()


def decode_ms(data: bytes, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = T.get_partitions_result()
        res.read(TBinaryProtocol.TBinaryProtocolAccelerated(TTransport.TMemoryBuffer(data)))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="1000,10000")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    for n in (int(x) for x in args.n.split(",")):
        data = answer_bytes(n)
        print(f"decode get_partitions answer of {n} partitions ({len(data) / 1e6:.2f} MB): "
              f"median {decode_ms(data, args.repeat):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
