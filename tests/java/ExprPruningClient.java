// Hive 4's own metastore client (HiveMetaStoreClient, hive-standalone-metastore-common 4.0.1) against a
// metastore, doing what Hive's PartitionPruner does for a query with a partition filter: ask the server
// to prune with a serialized expression (listPartitionsByExpr); when the client answers
// IncompatibleMetastoreException, prune on the client instead: every partition name
// (listPartitionNames), evaluate the filter on the names, fetch the chosen partitions by name.
//
// Then the calls Hive 4's client makes in its own (request) forms for alterDatabase, appendPartition,
// listPartitionsByFilter, listPartitionSpecs, dropPartition, dropTable and flushCache, and two calls
// of features this metastore does not have (the outcome's exception class; its message for ours).
//
// usage: java -cp <hive4 classpath>:<dir> ExprPruningClient <port> <db> <table> <key> <value>
// Prints one line per step: "<step> <outcome>".
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import org.apache.hadoop.hive.metastore.api.CompactionResponse;
import org.apache.hadoop.hive.metastore.api.CompactionType;
import org.apache.hadoop.hive.metastore.api.Database;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.PartitionSpec;
import org.apache.hadoop.hive.metastore.api.PartitionsByExprRequest;
import org.apache.hadoop.hive.metastore.conf.MetastoreConf;
import org.apache.thrift.TApplicationException;

public class ExprPruningClient {
  // not a real Kryo-serialized ExprNodeDesc: neither server can read it, which is the point
  private static final byte[] EXPR = {1, 2, 3, (byte) 0xff, 0, 7};

  public static void main(String[] args) throws Exception {
    Configuration conf = MetastoreConf.newMetastoreConf();
    MetastoreConf.setVar(conf, MetastoreConf.ConfVars.THRIFT_URIS, "thrift://127.0.0.1:" + args[0]);
    MetastoreConf.setLongVar(conf, MetastoreConf.ConfVars.THRIFT_CONNECTION_RETRIES, 1);
    String db = args[1], table = args[2], key = args[3], value = args[4];
    IMetaStoreClient client = new HiveMetaStoreClient(conf);
    try {
      List<Partition> parts = new ArrayList<>();
      boolean fallback = false;
      try {
        client.listPartitionsByExpr(db, table, EXPR, "__HIVE_DEFAULT_PARTITION__", (short) -1, parts);
        System.out.println("listPartitionsByExpr ok " + parts.size());
      } catch (IMetaStoreClient.IncompatibleMetastoreException e) {
        System.out.println("listPartitionsByExpr IncompatibleMetastoreException");
        fallback = true;
      } catch (Exception e) {
        System.out.println("listPartitionsByExpr " + e.getClass().getSimpleName());
      }
      if (fallback) {  // PartitionPruner.pruneBySequentialScan
        List<String> chosen = new ArrayList<>();
        for (String name : client.listPartitionNames(db, table, (short) -1)) {
          if (name.contains(key + "=" + value)) {
            chosen.add(name);
          }
        }
        List<Partition> pruned = client.getPartitionsByNames(db, table, chosen);
        List<String> got = new ArrayList<>();
        for (Partition p : pruned) {
          got.add(String.join(",", p.getValues()));
        }
        System.out.println("pruned " + String.join(";", got));
      }
      try {
        PartitionsByExprRequest req = new PartitionsByExprRequest(db, table, java.nio.ByteBuffer.wrap(EXPR));
        client.listPartitionsSpecByExpr(req, new ArrayList<PartitionSpec>());
        System.out.println("listPartitionsSpecByExpr ok");
      } catch (IMetaStoreClient.IncompatibleMetastoreException e) {
        System.out.println("listPartitionsSpecByExpr IncompatibleMetastoreException");
      } catch (Exception e) {
        System.out.println("listPartitionsSpecByExpr " + e.getClass().getSimpleName());
      }
      try {
        PartitionsByExprRequest req = new PartitionsByExprRequest(db, table, java.nio.ByteBuffer.wrap(EXPR));
        client.listPartitionNames(req);
        System.out.println("listPartitionNames(expr) ok");
      } catch (TApplicationException e) {
        System.out.println("listPartitionNames(expr) TApplicationException " + e.getType());
      } catch (Exception e) {
        System.out.println("listPartitionNames(expr) " + e.getClass().getSimpleName());
      }
      Database d = client.getDatabase(db);
      d.setDescription("altered by Hive 4's client");
      step("alterDatabase", () -> { client.alterDatabase(db, d); return client.getDatabase(db).getDescription(); });
      step("appendPartition", () -> String.join(",", client.appendPartition(db, table, List.of("z", "9")).getValues()));
      step("listPartitionsByFilter", () -> client.listPartitionsByFilter(db, table, key + " = \"z\"", (short) -1).size());
      step("listPartitionSpecs", () -> client.listPartitionSpecs(db, table, -1).size());
      step("dropPartition", () -> client.dropPartition(db, table, List.of("z", "9"), true));
      step("dropTable", () -> { client.dropTable(db, table, true, false); return client.tableExists(db, table); });
      step("flushCache", () -> { client.flushCache(); return "done"; });
      // write ids and compaction requests (the table was dropped: neither needs it, as in Hive)
      long txn = client.openTxn("hive4-client");
      String full = db + "." + table;
      step("allocateTableWriteId", () -> client.allocateTableWriteId(txn, db, table));
      step("allocateTableWriteId again", () -> client.allocateTableWriteId(txn, db, table));
      step("getValidWriteIds open", () -> client.getValidWriteIds(full).writeToString().substring(db.length()));
      step("getLatestTxnIdInConflict", () -> client.getLatestTxnIdInConflict(txn));
      client.commitTxn(txn);
      step("getValidWriteIds committed", () -> client.getValidWriteIds(full).writeToString().substring(db.length()));
      step("compact2", () -> {
        CompactionResponse r = client.compact2(db, table, null, CompactionType.MAJOR, null);
        return r.getState() + " " + r.isAccepted();
      });
      step("compact2 again", () -> {
        CompactionResponse r = client.compact2(db, table, null, CompactionType.MINOR, null);
        return r.getState() + " " + r.isAccepted();
      });
      step("showCompactions", () -> client.showCompactions().getCompacts().stream()
          .filter(e -> db.equals(e.getDbname()))
          .map(e -> e.getTablename() + " " + e.getType() + " " + e.getState() + " " + e.getPoolName())
          .collect(Collectors.joining(",")));
      step("getAllResourcePlans", () -> client.getAllResourcePlans("default").size());
    } finally {
      client.close();
    }
  }

  interface Step {
    Object run() throws Exception;
  }

  private static void step(String name, Step step) {
    try {
      System.out.println(name + " ok " + step.run());
    } catch (Exception e) {
      System.out.println(name + " " + e.getClass().getSimpleName() + " " + String.valueOf(e.getMessage()).split("\n")[0]);
    }
  }
}
