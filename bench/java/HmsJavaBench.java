// The benchmark's Java driver: Hive's own metastore client (HiveMetaStoreClient of the Hive 2.3 jars
// that Spark ships, the client Spark and Hive use) timing calls against one metastore. bench/java_client.py
// compiles it, runs it against our server and the reference, and prints the ratios.
//
// usage: java -cp <pyspark jars>/*:<dir> HmsJavaBench <port> <command> <args...>
//   load <db> <table> <n>                      create db and table, add n partitions (batches of 500)
//   reads <db> <table> <n> <warmup> <iters> <budget_s> <jvm_warmup>
//                                              getTable, getConfigValue, getPartitionNames, getPartitions,
//                                              getPartitionsByNames(min(n,1000)), two filters
//   concurrent <db> <table> <threads> <seconds> <jvm_warmup>
//                                              getTable from `threads` clients at once
// <jvm_warmup>: getTable calls made (untimed) before anything is timed, the same number against
// either server, so the client's code runs JIT-compiled, as in an engine's long-lived JVM (with a
// few calls it runs interpreted and adds ~0.5 ms to a getTable on either side). <warmup>: untimed
// calls of each operation before its timed ones.
//   add <db> <table> <n>                       a new table; one add_partitions of n partitions (timed)
//   drop <db> <table> <n>                      a new table of n partitions; one drop_partitions_req
//                                              of all n names (timed)
//   alter <db> <table> <n>                     a new table of n partitions, listed; one alter_partitions
//                                              of all n with a parameter added to each (timed)
// Each timed operation prints "RESULT <op> <n> <result size> <ms,ms,...>".
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.api.Database;
import org.apache.hadoop.hive.metastore.api.DropPartitionsRequest;
import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.metastore.api.NoSuchObjectException;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.RequestPartsSpec;
import org.apache.hadoop.hive.metastore.api.SerDeInfo;
import org.apache.hadoop.hive.metastore.api.StorageDescriptor;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;

public class HmsJavaBench {
  static final String FILTER_EQ = "p_a = \"a0\"";
  static final String FILTER_OR6 =
      "p_a = \"a0\" or p_b = \"b0\" or p_c = \"c0\" or p_a = \"a1\" or p_b = \"b1\" or p_c = \"c1\"";
  static int port;

  interface Call {
    int run() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    port = Integer.parseInt(args[0]);
    String cmd = args[1];
    String db = args[2], table = args[3];
    switch (cmd) {
      case "load":
        load(db, table, Integer.parseInt(args[4]));
        break;
      case "reads":
        reads(db, table, Integer.parseInt(args[4]), Integer.parseInt(args[5]), Integer.parseInt(args[6]),
            Double.parseDouble(args[7]), Integer.parseInt(args[8]));
        break;
      case "concurrent":
        concurrent(db, table, Integer.parseInt(args[4]), Double.parseDouble(args[5]), Integer.parseInt(args[6]));
        break;
      case "add":
        add(db, table, Integer.parseInt(args[4]));
        break;
      case "drop":
        drop(db, table, Integer.parseInt(args[4]));
        break;
      case "alter":
        alter(db, table, Integer.parseInt(args[4]));
        break;
      default:
        throw new IllegalArgumentException("unknown command " + cmd);
    }
  }

  static HiveMetaStoreClient client() throws Exception {
    HiveConf conf = new HiveConf();
    conf.setVar(HiveConf.ConfVars.METASTOREURIS, "thrift://127.0.0.1:" + port);
    conf.setIntVar(HiveConf.ConfVars.METASTORETHRIFTCONNECTIONRETRIES, 1);
    conf.setTimeVar(HiveConf.ConfVars.METASTORE_CLIENT_SOCKET_TIMEOUT, 1800, java.util.concurrent.TimeUnit.SECONDS);
    return new HiveMetaStoreClient(conf);
  }

  // ------------------------------------------------------------------ objects (as bench/workload.py)

  static List<FieldSchema> columns() {
    return new ArrayList<>(Arrays.asList(new FieldSchema("id", "bigint", "row id"),
        new FieldSchema("name", "string", null), new FieldSchema("amount", "decimal(18,2)", null),
        new FieldSchema("ts", "timestamp", null), new FieldSchema("payload", "string", "json")));
  }

  static StorageDescriptor storage() {
    StorageDescriptor sd = new StorageDescriptor();
    sd.setCols(columns());
    sd.setInputFormat("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat");
    sd.setOutputFormat("org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat");
    sd.setCompressed(false);
    sd.setNumBuckets(-1);
    SerDeInfo serde = new SerDeInfo();
    serde.setSerializationLib("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe");
    serde.putToParameters("serialization.format", "1");
    sd.setSerdeInfo(serde);
    sd.setBucketCols(new ArrayList<>());
    sd.setSortCols(new ArrayList<>());
    sd.setParameters(new java.util.HashMap<>());
    return sd;
  }

  static Table newTable(HiveMetaStoreClient c, String db, String name) throws Exception {
    try {
      c.getDatabase(db);
    } catch (NoSuchObjectException e) {
      Database d = new Database();
      d.setName(db);
      d.setDescription("java benchmark");
      c.createDatabase(d);
    }
    c.dropTable(db, name, true, true);
    Table t = new Table();
    t.setDbName(db);
    t.setTableName(name);
    t.setOwner("bench");
    t.setCreateTime((int) (System.currentTimeMillis() / 1000));
    t.setSd(storage());
    t.setPartitionKeys(new ArrayList<>(Arrays.asList(new FieldSchema("p_a", "string", null),
        new FieldSchema("p_b", "string", null), new FieldSchema("p_c", "string", null))));
    t.putToParameters("EXTERNAL", "FALSE");
    t.putToParameters("comment", "hmsbench-style table");
    t.setTableType("MANAGED_TABLE");
    c.createTable(t);
    return c.getTable(db, name);
  }

  static Partition partition(Table t, int i) {
    StorageDescriptor sd = new StorageDescriptor(t.getSd());
    sd.setLocation(null);
    Partition p = new Partition();
    p.setDbName(t.getDbName());
    p.setTableName(t.getTableName());
    p.setValues(new ArrayList<>(Arrays.asList("a" + i, "b" + i, "c" + i)));
    p.setCreateTime((int) (System.currentTimeMillis() / 1000));
    p.setSd(sd);
    p.setParameters(new java.util.HashMap<>());
    return p;
  }

  static List<Partition> partitions(Table t, int from, int to) {
    List<Partition> out = new ArrayList<>(to - from);
    for (int i = from; i < to; i++) out.add(partition(t, i));
    return out;
  }

  static String name(int i) {
    return "p_a=a" + i + "/p_b=b" + i + "/p_c=c" + i;
  }

  // ------------------------------------------------------------------ commands

  static void load(String db, String table, int n) throws Exception {
    HiveMetaStoreClient c = client();
    Table t = newTable(c, db, table);
    for (int i = 0; i < n; i += 500) c.add_partitions(partitions(t, i, Math.min(n, i + 500)));
    System.out.println("LOADED " + table + " " + c.listPartitionNames(db, table, (short) -1).size());
    c.close();
  }

  static void reads(String db, String table, int n, int warmup, int iters, double budget, int jvmWarmup)
      throws Exception {
    HiveMetaStoreClient c = client();
    List<String> names = new ArrayList<>();
    for (int i = 0; i < Math.min(n, 1000); i++) names.add(name(i));
    for (int i = 0; i < jvmWarmup; i++) c.getTable(db, table);
    time("getTable", n, warmup, iters, budget, () -> c.getTable(db, table).getPartitionKeysSize());
    // a call that reads no database on either server: a server's own cost per call, against the ceiling's
    time("getConfigValue", n, warmup, iters, budget,
        () -> c.getConfigValue("hive.metastore.client.socket.timeout", "x").length());
    time("getPartitionNames", n, warmup, iters, budget, () -> c.listPartitionNames(db, table, (short) -1).size());
    time("getPartitions", n, warmup, iters, budget, () -> c.listPartitions(db, table, (short) -1).size());
    time("getPartitionsByNames", names.size(), warmup, iters, budget,
        () -> c.getPartitionsByNames(db, table, names).size());
    time("getPartitionsByFilter", n, warmup, iters, budget,
        () -> c.listPartitionsByFilter(db, table, FILTER_EQ, (short) -1).size());
    time("bigFilter.or6", n, warmup, iters, budget,
        () -> c.listPartitionsByFilter(db, table, FILTER_OR6, (short) -1).size());
    c.close();
  }

  static void time(String op, int n, int warmup, int iters, double budget, Call call) throws Exception {
    int size = 0;
    for (int i = 0; i < warmup; i++) size = call.run();
    List<String> ms = new ArrayList<>();
    long deadline = System.nanoTime() + (long) (budget * 1e9);
    for (int i = 0; i < iters && (i < 3 || System.nanoTime() < deadline); i++) {
      long t0 = System.nanoTime();
      size = call.run();
      ms.add(String.format("%.3f", (System.nanoTime() - t0) / 1e6));
    }
    System.out.println("RESULT " + op + " " + n + " " + size + " " + String.join(",", ms));
  }

  static void concurrent(String db, String table, int threads, double seconds, int jvmWarmup) throws Exception {
    List<HiveMetaStoreClient> clients = new ArrayList<>();
    for (int i = 0; i < threads; i++) clients.add(client());
    final Exception[] failed = new Exception[1];
    AtomicLong warm = new AtomicLong();
    List<Thread> warming = new ArrayList<>();
    for (HiveMetaStoreClient c : clients) {
      Thread t = new Thread(() -> {
        try {
          do {
            c.getTable(db, table);
          } while (warm.incrementAndGet() < jvmWarmup);
        } catch (Exception e) {
          failed[0] = e;
        }
      });
      t.start();
      warming.add(t);
    }
    for (Thread t : warming) t.join();
    if (failed[0] != null) throw failed[0];
    AtomicLong calls = new AtomicLong();
    CountDownLatch start = new CountDownLatch(1);
    long[] window = new long[1];
    List<Thread> ts = new ArrayList<>();
    for (HiveMetaStoreClient c : clients) {
      Thread t = new Thread(() -> {
        try {
          start.await();
          while (System.nanoTime() < window[0]) {
            c.getTable(db, table);
            calls.incrementAndGet();
          }
        } catch (Exception e) {
          failed[0] = e;
        }
      });
      t.start();
      ts.add(t);
    }
    long t0 = System.nanoTime();
    window[0] = t0 + (long) (seconds * 1e9);
    start.countDown();
    for (Thread t : ts) t.join();
    double elapsed = (System.nanoTime() - t0) / 1e9;
    if (failed[0] != null) throw failed[0];
    System.out.println(String.format("RESULT concurrentGetTable %d %d %.1f", threads, calls.get(),
        calls.get() / elapsed));
    for (HiveMetaStoreClient c : clients) c.close();
  }

  static void add(String db, String table, int n) throws Exception {
    HiveMetaStoreClient c = client();
    Table t = newTable(c, db, table);
    List<Partition> parts = partitions(t, 0, n);
    long t0 = System.nanoTime();
    int added = c.add_partitions(parts);
    double ms = (System.nanoTime() - t0) / 1e6;
    System.out.println(String.format("RESULT addPartitions %d %d %.3f", n, added, ms));
    c.dropTable(db, table, true, true);
    c.close();
  }

  static void drop(String db, String table, int n) throws Exception {
    HiveMetaStoreClient c = client();
    Table t = newTable(c, db, table);
    for (int i = 0; i < n; i += 500) c.add_partitions(partitions(t, i, Math.min(n, i + 500)));
    List<String> names = new ArrayList<>();
    for (int i = 0; i < n; i++) names.add(name(i));
    // HiveMetaStoreClient drops partitions only by serialized expressions; by names is the Thrift call
    TSocket socket = new TSocket("127.0.0.1", port);
    socket.setTimeout(1800 * 1000);
    socket.open();
    ThriftHiveMetastore.Client raw = new ThriftHiveMetastore.Client(new TBinaryProtocol(socket));
    DropPartitionsRequest req = new DropPartitionsRequest(db, table, RequestPartsSpec.names(names));
    req.setDeleteData(true);
    req.setIfExists(true);
    req.setNeedResult(true);
    long t0 = System.nanoTime();
    int dropped = raw.drop_partitions_req(req).getPartitionsSize();
    double ms = (System.nanoTime() - t0) / 1e6;
    System.out.println(String.format("RESULT dropPartitions %d %d %.3f", n, dropped, ms));
    socket.close();
    c.dropTable(db, table, true, true);
    c.close();
  }

  static void alter(String db, String table, int n) throws Exception {
    HiveMetaStoreClient c = client();
    Table t = newTable(c, db, table);
    for (int i = 0; i < n; i += 500) c.add_partitions(partitions(t, i, Math.min(n, i + 500)));
    List<Partition> parts = c.listPartitions(db, table, (short) -1);
    for (Partition p : parts) p.putToParameters("bench.altered", "1");
    long t0 = System.nanoTime();
    c.alter_partitions(db, table, parts);
    double ms = (System.nanoTime() - t0) / 1e6;
    System.out.println(String.format("RESULT alterPartitions %d %d %.3f", n, parts.size(), ms));
    c.dropTable(db, table, true, true);
    c.close();
  }
}
