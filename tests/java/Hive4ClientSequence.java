// One scripted sequence of Hive 4.0.1's own metastore client (HiveMetaStoreClient) against one metastore,
// for tests/test_hive4_java_client.py: it runs the same sequence against our server and against the
// Hive 4 reference and compares the answers step by step.
//
// Every step prints one JSON line: {"step": name, ...} with the answer as
//   "struct": class, "tjson": a Thrift struct in TJSONProtocol (decoded by the test with our bindings),
//   "list": class, "tjson": [...] (a list of structs), "map": class, "tjson": {key: [...]},
//   "value": plain JSON (strings, numbers, lists, maps), or
//   "error": the exception's class, "message": its text ("appType": TApplicationException's type);
//   "ms": how long the step took.
// Transaction, lock and notification ids are printed relative to the sequence's first one (each server
// numbers its own); what the test compares and masks is its business (tests/conformance/allowlist.py).
//
// usage: java -cp <hive4 classpath>:<dir> Hive4ClientSequence <port> <database> <token>
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import org.apache.hadoop.hive.metastore.TableType;
import org.apache.hadoop.hive.metastore.api.*;
import org.apache.hadoop.hive.metastore.conf.MetastoreConf;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.TBase;
import org.apache.thrift.TSerializer;
import org.apache.thrift.protocol.TJSONProtocol;

public class Hive4ClientSequence {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static TSerializer tjson;
  private static IMetaStoreClient client;
  private static ThriftHiveMetastore.Client old;  // a second connection, raw Thrift: the old forms
  private static String db, token;
  private static int port;
  private static long firstTxn = -1, firstLock = -1, firstEvent = -1;
  private static final long[] two = {0, 0};  // the two transactions openTxns opens (both aborted)

  interface Call {
    Object run() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    Configuration conf = MetastoreConf.newMetastoreConf();
    port = Integer.parseInt(args[0]);
    MetastoreConf.setVar(conf, MetastoreConf.ConfVars.THRIFT_URIS, "thrift://127.0.0.1:" + port);
    MetastoreConf.setLongVar(conf, MetastoreConf.ConfVars.THRIFT_CONNECTION_RETRIES, 1);
    db = args[1];
    token = args[2];
    tjson = new TSerializer(new TJSONProtocol.Factory());
    client = new HiveMetaStoreClient(conf);
    try {
      notificationsStart();
      databases();
      catalogs();
      tables();
      partitions();
      exchange();
      statistics();
      functions();
      constraints();
      privilegesAndRoles();
      transactions();
      metastore();
      oldForms();
      ownConnections();
      refused();
      notificationsEnd();
      step("dropDatabase cascade", () -> { client.dropDatabase(db, true, false, true); return null; });
      step("getDatabase dropped", () -> client.getDatabase(db));
    } finally {
      client.close();
    }
  }

  // ------------------------------------------------------------------ objects

  private static FieldSchema col(String name, String type) {
    return new FieldSchema(name, type, null);
  }

  private static StorageDescriptor sd(List<FieldSchema> cols) {
    StorageDescriptor sd = new StorageDescriptor();
    sd.setCols(cols);
    sd.setInputFormat("org.apache.hadoop.mapred.TextInputFormat");
    sd.setOutputFormat("org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat");
    sd.setSerdeInfo(new SerDeInfo(null, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
        new HashMap<>(Map.of("serialization.format", "1"))));
    sd.setBucketCols(new ArrayList<>());
    sd.setSortCols(new ArrayList<>());
    sd.setParameters(new HashMap<>());
    sd.setNumBuckets(-1);
    return sd;
  }

  private static Table table(String name, List<FieldSchema> cols, List<FieldSchema> keys) {
    Table t = new Table();
    t.setDbName(db);
    t.setTableName(name);
    t.setOwner("tester");
    t.setOwnerType(PrincipalType.USER);
    t.setSd(sd(cols));
    t.setPartitionKeys(keys);
    t.setParameters(new HashMap<>(Map.of("k", "v")));
    t.setTableType("MANAGED_TABLE");
    return t;
  }

  private static Partition partition(String... values) {
    return part("t", values);
  }

  private static Partition part(String table, String... values) {
    Partition p = new Partition();
    p.setDbName(db);
    p.setTableName(table);
    p.setValues(Arrays.asList(values));
    p.setSd(sd(list(col("a", "int"), col("b", "string"))));
    p.setParameters(new HashMap<>(Map.of("n", String.join("", values))));
    return p;
  }

  private static ColumnStatisticsObj longStats(String column, long low, long high, long nulls, long ndv) {
    LongColumnStatsData data = new LongColumnStatsData(nulls, ndv);
    data.setLowValue(low);
    data.setHighValue(high);
    return new ColumnStatisticsObj(column, "int", ColumnStatisticsData.longStats(data));
  }

  private static ColumnStatistics stats(String partName, ColumnStatisticsObj... objs) {
    return stats("t", partName, objs);
  }

  private static ColumnStatistics stats(String table, String partName, ColumnStatisticsObj... objs) {
    ColumnStatisticsDesc desc = new ColumnStatisticsDesc(partName == null, db, table);
    if (partName != null) {
      desc.setPartName(partName);
    }
    desc.setLastAnalyzed(1700000000L);
    ColumnStatistics cs = new ColumnStatistics(desc, Arrays.asList(objs));
    cs.setEngine("hive");
    return cs;
  }

  private static HiveObjectRef ref(HiveObjectType type, String object, List<String> partValues, String column) {
    HiveObjectRef r = new HiveObjectRef(type, db, object, partValues, column);
    r.setCatName("hive");
    return r;
  }

  private static HiveObjectPrivilege grant(HiveObjectRef ref, String principal, PrincipalType kind, String privilege) {
    return new HiveObjectPrivilege(ref, principal, kind,
        new PrivilegeGrantInfo(privilege, 0, "bob", PrincipalType.USER, false), "SQL");
  }

  // ------------------------------------------------------------------ the sequence

  private static void databases() {
    Database d = new Database(db, "made by Hive 4's client", null, new HashMap<>(Map.of("k", "v")));
    step("createDatabase", () -> { client.createDatabase(d); return null; });
    step("createDatabase again", () -> { client.createDatabase(d); return null; });
    step("getDatabase", () -> client.getDatabase(db));
    step("getDatabase upper case", () -> client.getDatabase(db.toUpperCase()));
    step("getDatabase missing", () -> client.getDatabase(db + "_nosuch"));
    step("getDatabases pattern", () -> client.getDatabases(db + "*"));
    step("getAllDatabases (this test's)", () -> mine(client.getAllDatabases()));
    step("alterDatabase", () -> {
      Database changed = client.getDatabase(db);
      changed.setDescription("altered");
      changed.putToParameters("k2", "v2");
      client.alterDatabase(db, changed);
      return client.getDatabase(db);
    });
  }

  private static void tables() {
    step("createTable", () -> {
      client.createTable(table("t", list(col("a", "int"), col("b", "string")),
          list(col("p", "string"), col("q", "int"))));
      return null;
    });
    step("createTable again", () -> { client.createTable(table("t", list(col("a", "int")), list())); return null; });
    step("createTable bad column type", () -> {
      client.createTable(table("bad", list(col("a", "nosuchtype")), list()));
      return null;
    });
    step("createTable(CreateTableRequest) with a primary key", () -> {
      CreateTableRequest req = new CreateTableRequest(table("t2", list(col("id", "bigint"), col("x", "string")),
          list()));
      SQLPrimaryKey pk = new SQLPrimaryKey();
      pk.setTable_db(db);
      pk.setTable_name("t2");
      pk.setColumn_name("id");
      pk.setKey_seq(1);
      pk.setPk_name("t2_pk");
      pk.setEnable_cstr(false);
      pk.setValidate_cstr(false);
      pk.setRely_cstr(true);
      pk.setCatName("hive");
      req.setPrimaryKeys(list(pk));
      client.createTable(req);
      return null;
    });
    step("getTable", () -> client.getTable(db, "t"));
    step("getTable upper case", () -> client.getTable(db.toUpperCase(), "T"));
    step("getTable missing", () -> client.getTable(db, "nosuch"));
    step("getTable(GetTableRequest)", () -> {
      GetTableRequest req = new GetTableRequest(db, "t2");
      req.setCatName("hive");
      return client.getTable(req);
    });
    step("tableExists", () -> list(client.tableExists(db, "t"), client.tableExists(db, "nosuch")));
    step("getTables", () -> client.getTables(db, "*"));
    step("getTables pattern", () -> client.getTables(db, "t2|no*"));
    step("getTables by type", () -> client.getTables(db, "*", TableType.MANAGED_TABLE));
    step("getAllTables", () -> client.getAllTables(db));
    step("getTableMeta", () -> client.getTableMeta(db, "*", null));
    step("getTableObjectsByName", () -> client.getTableObjectsByName(db, list("t2", "t", "nosuch")));
    step("getSchema", () -> client.getSchema(db, "t"));
    step("getFields", () -> client.getFields(db, "t"));
    step("getFieldsRequest", () -> {
      GetFieldsRequest req = new GetFieldsRequest(db, "t");
      req.setCatName("hive");
      return client.getFieldsRequest(req);
    });
    step("getSchemaRequest", () -> {
      GetSchemaRequest req = new GetSchemaRequest(db, "t");
      req.setCatName("hive");
      return client.getSchemaRequest(req);
    });
    step("getTablesExt without capabilities", () ->
        client.getTablesExt("hive", db, "*", GetTablesExtRequestFields.ALL.getValue(), -1));
    HiveMetaStoreClient.setProcessorCapabilities(new String[] {"HIVEFULLACIDREAD", "EXTWRITE"});
    try {
      step("getTablesExt", () -> client.getTablesExt("hive", db, "*", GetTablesExtRequestFields.ALL.getValue(), -1));
      step("getTablesExt limit 1 (count)", () ->
          client.getTablesExt("hive", db, "t*", GetTablesExtRequestFields.PROCESSOR_CAPABILITIES.getValue(), 1).size());
      step("getTablesExt missing database", () -> client.getTablesExt("hive", db + "_nosuch", "*", 1, -1));
    } finally {
      HiveMetaStoreClient.setProcessorCapabilities(null);
    }
    step("listTableNamesByFilter owner", () -> client.listTableNamesByFilter(db,
        "hive_filter_field_owner__ like \"test.*\"", (short) -1));
    step("listTableNamesByFilter bad", () -> client.listTableNamesByFilter(db, "k = ", (short) -1));
    step("alter_table add column", () -> {
      Table t2 = client.getTable(db, "t2");
      t2.getSd().addToCols(col("y", "double"));
      t2.putToParameters("altered", "yes");
      client.alter_table(db, "t2", t2);
      return client.getTable(db, "t2");
    });
    step("alter_table incompatible column type", () -> {
      Table t2 = client.getTable(db, "t2");
      t2.getSd().getCols().get(0).setType("map<string,string>");
      client.alter_table(db, "t2", t2);
      return null;
    });
    step("alter_table missing", () -> { client.alter_table(db, "nosuch", client.getTable(db, "t2")); return null; });
    step("truncateTable", () -> { client.truncateTable(db, "t2", null); return client.getTable(db, "t2"); });
    step("dropTable", () -> { client.dropTable(db, "t2", true, false); return client.tableExists(db, "t2"); });
    step("dropTable missing", () -> { client.dropTable(db, "t2", true, false); return null; });
    step("dropTable missing, ignored", () -> { client.dropTable(db, "t2", true, true); return null; });
  }

  private static void partitions() {
    step("add_partition", () -> client.add_partition(partition("x", "1")));
    step("add_partitions", () -> client.add_partitions(list(partition("x", "2"), partition("y", "1"))));
    step("add_partitions ifNotExists needResult", () ->
        client.add_partitions(list(partition("x", "1"), partition("z", "3")), true, true));
    step("add_partition again", () -> client.add_partition(partition("x", "1")));
    step("appendPartition values", () -> client.appendPartition(db, "t", list("w", "8")));
    step("appendPartition name", () -> client.appendPartition(db, "t", "p=v/q=9"));
    step("getPartition", () -> client.getPartition(db, "t", list("x", "1")));
    step("getPartition name", () -> client.getPartition(db, "t", "p=x/q=2"));
    step("getPartition missing", () -> client.getPartition(db, "t", list("x", "7")));
    step("getPartitionRequest", () -> {
      GetPartitionRequest req = new GetPartitionRequest(db, "t", list("y", "1"));
      req.setCatName("hive");
      return client.getPartitionRequest(req);
    });
    step("getPartitionWithAuthInfo", () ->
        client.getPartitionWithAuthInfo(db, "t", list("x", "1"), "u_" + token, list("g")));
    step("listPartitions", () -> client.listPartitions(db, "t", (short) -1));
    step("listPartitions max 2", () -> client.listPartitions(db, "t", (short) 2));
    step("listPartitions partial", () -> client.listPartitions(db, "t", list("x"), (short) -1));
    step("listPartitionNames", () -> client.listPartitionNames(db, "t", (short) -1));
    step("listPartitionNames partial", () -> client.listPartitionNames(db, "t", list("x"), (short) -1));
    step("listPartitionNames missing table", () -> client.listPartitionNames(db, "nosuch", (short) -1));
    step("listPartitionsByFilter", () -> client.listPartitionsByFilter(db, "t", "p = \"x\" or q > 5", (short) -1));
    step("listPartitionsByFilter bad", () -> client.listPartitionsByFilter(db, "t", "p = ", (short) -1));
    step("getNumPartitionsByFilter", () -> client.getNumPartitionsByFilter(db, "t", "q >= 2"));
    step("getPartitionsByNames", () -> client.getPartitionsByNames(db, "t", list("p=y/q=1", "p=x/q=1", "p=no/q=0")));
    step("listPartitionsWithAuthInfo", () ->
        client.listPartitionsWithAuthInfo(db, "t", (short) -1, "u_" + token, list("g")));
    step("listPartitionsWithAuthInfo partial", () ->
        client.listPartitionsWithAuthInfo(db, "t", list("x"), (short) -1, "u_" + token, list("g")));
    step("listPartitionsWithAuthInfoRequest", () -> {
      GetPartitionsPsWithAuthRequest req = new GetPartitionsPsWithAuthRequest(db, "t");
      req.setCatName("hive");
      req.setPartVals(list("", "1"));
      req.setMaxParts((short) -1);
      return client.listPartitionsWithAuthInfoRequest(req);
    });
    step("getPartitionsRequest", () -> {
      PartitionsRequest req = new PartitionsRequest(db, "t");
      req.setCatName("hive");
      req.setMaxParts((short) 3);
      return client.getPartitionsRequest(req);
    });
    step("getPartitionsWithSpecs projection", () -> {
      GetPartitionsRequest req = new GetPartitionsRequest(db, "t", new GetProjectionsSpec(), new GetPartitionsFilterSpec());
      req.setCatName("hive");
      req.getProjectionSpec().setFieldList(list("values", "sd.location", "parameters"));
      return client.getPartitionsWithSpecs(req);
    });
    step("listPartitionSpecs", () -> client.listPartitionSpecs(db, "t", -1).toPartitionSpec());
    step("listPartitionSpecsByFilter", () ->
        client.listPartitionSpecsByFilter(db, "t", "p = \"x\"", -1).toPartitionSpec());
    step("listPartitionValues", () -> {
      PartitionValuesRequest req = new PartitionValuesRequest(db, "t", list(col("p", "string")));
      req.setCatName("hive");
      req.setApplyDistinct(true);
      return client.listPartitionValues(req);
    });
    step("alter_partition", () -> {
      Partition p = client.getPartition(db, "t", list("x", "2"));
      p.putToParameters("altered", "yes");
      client.alter_partition(db, "t", p, null);
      return client.getPartition(db, "t", list("x", "2"));
    });
    step("alter_partitions", () -> {
      List<Partition> ps = client.getPartitionsByNames(db, "t", list("p=x/q=1", "p=y/q=1"));
      for (Partition p : ps) {
        p.putToParameters("bulk", "yes");
      }
      client.alter_partitions(db, "t", ps, null);
      return client.getPartitionsByNames(db, "t", list("p=x/q=1", "p=y/q=1"));
    });
    step("renamePartition", () -> {
      Partition p = client.getPartition(db, "t", list("w", "8"));
      p.setValues(list("w", "80"));
      client.renamePartition(db, "t", list("w", "8"), p);
      return client.listPartitionNames(db, "t", (short) -1);
    });
    step("renamePartition onto an existing one", () -> {
      Partition p = client.getPartition(db, "t", list("w", "80"));
      p.setValues(list("x", "1"));
      client.renamePartition(db, "t", list("w", "80"), p);
      return null;
    });
    step("markPartitionForEvent", () -> {
      client.markPartitionForEvent(db, "t", new HashMap<>(Map.of("p", "x", "q", "1")), PartitionEventType.LOAD_DONE);
      return list(client.isPartitionMarkedForEvent(db, "t", new HashMap<>(Map.of("p", "x", "q", "1")), PartitionEventType.LOAD_DONE),
          client.isPartitionMarkedForEvent(db, "t", new HashMap<>(Map.of("p", "y", "q", "1")), PartitionEventType.LOAD_DONE));
    });
    step("partitionNameToVals", () -> client.partitionNameToVals("p=a%2Fb/q=1"));
    step("partitionNameToSpec", () -> client.partitionNameToSpec("p=a/q=1"));
    step("validatePartitionNameCharacters", () -> {
      client.validatePartitionNameCharacters(list("ok", "also ok"));
      return null;
    });
    step("dropPartition", () -> client.dropPartition(db, "t", list("w", "80"), true));
    step("dropPartition name", () -> client.dropPartition(db, "t", "p=v/q=9", true));
    step("dropPartition missing", () -> client.dropPartition(db, "t", list("w", "80"), true));
    step("listPartitionNames after drops", () -> client.listPartitionNames(db, "t", (short) -1));
  }

  private static void statistics() {
    step("updateTableColumnStatistics", () -> client.updateTableColumnStatistics(stats(null, longStats("a", 1, 9, 0, 5))));
    step("getTableColumnStatistics", () -> client.getTableColumnStatistics(db, "t", list("a", "b"), "hive"));
    step("updatePartitionColumnStatistics", () -> list(
        client.updatePartitionColumnStatistics(stats("p=x/q=1", longStats("a", 1, 5, 1, 3))),
        client.updatePartitionColumnStatistics(stats("p=x/q=2", longStats("a", -2, 3, 0, 4)))));
    step("getPartitionColumnStatistics", () ->
        client.getPartitionColumnStatistics(db, "t", list("p=x/q=1", "p=x/q=2", "p=z/q=3"), list("a"), "hive"));
    step("getAggrColStatsFor", () ->
        client.getAggrColStatsFor(db, "t", list("a"), list("p=x/q=1", "p=x/q=2"), "hive"));
    step("getTable with statistics' parameters", () -> client.getTable(db, "t"));
    step("deletePartitionColumnStatistics", () -> client.deletePartitionColumnStatistics(db, "t", "p=x/q=1", "a", "hive"));
    step("deleteTableColumnStatistics", () -> client.deleteTableColumnStatistics(db, "t", "a", "hive"));
    step("getTableColumnStatistics after delete", () -> client.getTableColumnStatistics(db, "t", list("a"), "hive"));
    step("truncateTable partitions", () -> {
      client.truncateTable(db, "t", list("p=y/q=1", "p=x/q=2"));
      return client.getPartitionsByNames(db, "t", list("p=y/q=1", "p=x/q=2", "p=x/q=1"));
    });
    step("getPartitionColumnStatistics after truncate", () ->
        client.getPartitionColumnStatistics(db, "t", list("p=y/q=1", "p=x/q=2"), list("a"), "hive"));
  }

  private static void functions() {
    Function f = new Function("f_" + token, db, "com.example.Udf", "tester", PrincipalType.USER, 0,
        FunctionType.JAVA, new ArrayList<>());
    step("createFunction", () -> { client.createFunction(f); return null; });
    step("createFunction again", () -> { client.createFunction(f); return null; });
    step("getFunction", () -> client.getFunction(db, "f_" + token));
    step("getFunction missing", () -> client.getFunction(db, "nosuch"));
    step("getFunctions", () -> client.getFunctions(db, "f_*"));
    step("getAllFunctions (this test's)", () -> client.getAllFunctions().getFunctions().stream()
        .filter(x -> db.equals(x.getDbName())).collect(Collectors.toList()));
    step("alterFunction", () -> {
      Function changed = client.getFunction(db, "f_" + token);
      changed.setClassName("com.example.Other");
      client.alterFunction(db, "f_" + token, changed);
      return client.getFunction(db, "f_" + token);
    });
    step("dropFunction", () -> { client.dropFunction(db, "f_" + token); return client.getFunctions(db, "*"); });
  }

  private static void constraints() {
    step("createTable for constraints", () -> {
      client.createTable(table("c", list(col("id", "int"), col("u", "string"), col("n", "string")), list()));
      return null;
    });
    step("addPrimaryKey", () -> {
      SQLPrimaryKey pk = new SQLPrimaryKey();
      pk.setTable_db(db);
      pk.setTable_name("c");
      pk.setColumn_name("id");
      pk.setKey_seq(1);
      pk.setPk_name("c_pk");
      pk.setRely_cstr(true);
      pk.setCatName("hive");
      client.addPrimaryKey(list(pk));
      PrimaryKeysRequest req = new PrimaryKeysRequest(db, "c");
      req.setCatName("hive");
      return client.getPrimaryKeys(req);
    });
    step("addUniqueConstraint", () -> {
      SQLUniqueConstraint uk = new SQLUniqueConstraint();
      uk.setCatName("hive");
      uk.setTable_db(db);
      uk.setTable_name("c");
      uk.setColumn_name("u");
      uk.setKey_seq(1);
      uk.setUk_name("c_uk");
      client.addUniqueConstraint(list(uk));
      return client.getUniqueConstraints(new UniqueConstraintsRequest("hive", db, "c"));
    });
    step("addNotNullConstraint", () -> {
      SQLNotNullConstraint nn = new SQLNotNullConstraint();
      nn.setCatName("hive");
      nn.setTable_db(db);
      nn.setTable_name("c");
      nn.setColumn_name("n");
      nn.setNn_name("c_nn");
      client.addNotNullConstraint(list(nn));
      return client.getNotNullConstraints(new NotNullConstraintsRequest("hive", db, "c"));
    });
    step("getAllTableConstraints", () -> client.getAllTableConstraints(new AllTableConstraintsRequest(db, "c", "hive")));
    step("dropConstraint", () -> {
      client.dropConstraint(db, "c", "c_uk");
      return client.getUniqueConstraints(new UniqueConstraintsRequest("hive", db, "c"));
    });
    step("getForeignKeys none", () -> {
      ForeignKeysRequest req = new ForeignKeysRequest(null, null, db, "c");
      req.setCatName("hive");
      return client.getForeignKeys(req);
    });
    step("createTableWithConstraints", () -> {
      SQLForeignKey fk = new SQLForeignKey(db, "c", "id", db, "f", "cid", 1, 0, 0, "f_fk", "c_pk", false, false, true);
      fk.setCatName("hive");
      SQLCheckConstraint ck = new SQLCheckConstraint("hive", db, "f", "n", "n > 0", "f_ck", false, false, false);
      client.createTableWithConstraints(table("f", list(col("cid", "int"), col("n", "int")), list()),
          null, list(fk), null, null, null, list(ck));
      return null;
    });
    step("getForeignKeys", () -> {
      ForeignKeysRequest req = new ForeignKeysRequest(db, "c", db, "f");
      req.setCatName("hive");
      return client.getForeignKeys(req);
    });
    step("getForeignKeys of the parent", () -> {
      ForeignKeysRequest req = new ForeignKeysRequest(db, "c", null, null);
      req.setCatName("hive");
      return client.getForeignKeys(req);
    });
    step("addForeignKey", () -> {
      SQLForeignKey fk = new SQLForeignKey(db, "c", "id", db, "f", "n", 1, 0, 0, "f_fk2", "c_pk", false, false, false);
      fk.setCatName("hive");
      client.addForeignKey(list(fk));
      ForeignKeysRequest req = new ForeignKeysRequest(null, null, db, "f");
      req.setCatName("hive");
      return client.getForeignKeys(req);
    });
    step("addForeignKey to a missing key", () -> {
      SQLForeignKey fk = new SQLForeignKey(db, "c", "u", db, "f", "n", 1, 0, 0, "f_fk3", "nosuch", false, false, false);
      fk.setCatName("hive");
      client.addForeignKey(list(fk));
      return null;
    });
    step("addDefaultConstraint", () -> {
      client.addDefaultConstraint(list(new SQLDefaultConstraint("hive", db, "c", "u", "'none'", "c_dc", false, false,
          false)));
      return client.getDefaultConstraints(new DefaultConstraintsRequest("hive", db, "c"));
    });
    step("addCheckConstraint", () -> {
      client.addCheckConstraint(list(new SQLCheckConstraint("hive", db, "c", "id", "id > 0", "c_ck", false, false,
          false)));
      return client.getCheckConstraints(new CheckConstraintsRequest("hive", db, "c"));
    });
    step("getCheckConstraints of the new table", () -> client.getCheckConstraints(new CheckConstraintsRequest("hive", db, "f")));
    step("getAllTableConstraints after", () -> client.getAllTableConstraints(new AllTableConstraintsRequest(db, "c", "hive")));
    step("dropConstraint a referenced key", () -> { client.dropConstraint(db, "c", "c_pk"); return null; });
    step("dropTable referenced", () -> { client.dropTable(db, "c", true, false); return null; });
    step("dropTable referencing", () -> { client.dropTable(db, "f", true, false); return client.tableExists(db, "f"); });
  }

  private static void privilegesAndRoles() {
    String role = "r_" + token, user = "u_" + token;
    HiveObjectRef tref = ref(HiveObjectType.TABLE, "t", null, null);
    step("create_role", () -> client.create_role(new Role(role, 0, "admin")));
    step("create_role again", () -> client.create_role(new Role(role, 0, "admin")));
    step("listRoleNames (this test's)", () -> client.listRoleNames().stream().filter(r -> r.equals(role))
        .collect(Collectors.toList()));
    step("grant_role", () -> client.grant_role(role, user, PrincipalType.USER, "admin", PrincipalType.ROLE, false));
    step("list_roles", () -> client.list_roles(user, PrincipalType.USER));
    step("get_principals_in_role", () -> client.get_principals_in_role(new GetPrincipalsInRoleRequest(role)));
    step("get_role_grants_for_principal", () ->
        client.get_role_grants_for_principal(new GetRoleGrantsForPrincipalRequest(user, PrincipalType.USER)));
    step("grant_privileges", () -> client.grant_privileges(new PrivilegeBag(list(
        grant(tref, user, PrincipalType.USER, "SELECT"), grant(tref, role, PrincipalType.ROLE, "INSERT")))));
    step("grant_privileges again", () -> client.grant_privileges(new PrivilegeBag(list(
        grant(tref, user, PrincipalType.USER, "SELECT")))));
    step("list_privileges", () -> client.list_privileges(user, PrincipalType.USER, tref));
    step("refresh_privileges", () -> {
      HiveObjectPrivilege p = grant(ref(HiveObjectType.TABLE, "t", null, null), "v_" + token, PrincipalType.USER,
          "SELECT");
      p.setAuthorizer("refresher");
      boolean done = client.refresh_privileges(ref(HiveObjectType.TABLE, "t", null, null), "refresher",
          new PrivilegeBag(list(p)));
      return list(done, client.list_privileges("v_" + token, PrincipalType.USER, tref).size());
    });
    step("list_privileges of the role", () -> client.list_privileges(role, PrincipalType.ROLE, tref));
    step("get_privilege_set", () -> client.get_privilege_set(tref, user, list("g_" + token)));
    step("revoke_privileges", () -> {
      client.revoke_privileges(new PrivilegeBag(list(grant(tref, user, PrincipalType.USER, "SELECT"))), false);
      return client.list_privileges(user, PrincipalType.USER, tref);
    });
    step("revoke_role", () -> client.revoke_role(role, user, PrincipalType.USER, false));
    step("revoke_role again", () -> client.revoke_role(role, user, PrincipalType.USER, false));
    step("list_roles after revoke", () -> client.list_roles(user, PrincipalType.USER));
    step("drop_role", () -> client.drop_role(role));
    step("drop_role missing", () -> client.drop_role(role));
  }

  private static Object rel(long txn) {
    return txn - firstTxn;
  }

  private static void transactions() {
    String user = "u_" + token;
    long[] txn = {0};
    long[] lock = {0};
    step("openTxn", () -> {
      txn[0] = client.openTxn(user);
      firstTxn = txn[0];
      return rel(txn[0]);
    });
    step("showTxns (this test's)", () -> client.showTxns().getOpen_txns().stream().filter(t -> t.getId() >= firstTxn)
        .filter(t -> user.equals(t.getUser())).map(t -> list(rel(t.getId()), t.getState().toString(), t.getUser()))
        .collect(Collectors.toList()));
    step("lock", () -> {
      LockComponent c = new LockComponent(LockType.SHARED_READ, LockLevel.TABLE, db);
      c.setTablename("t");
      c.setOperationType(DataOperationType.SELECT);
      c.setIsTransactional(true);
      LockRequest req = new LockRequest(list(c), user, "localhost");
      req.setTxnid(txn[0]);
      LockResponse r = client.lock(req);
      lock[0] = r.getLockid();
      firstLock = lock[0];
      return r.getState().toString();
    });
    step("checkLock", () -> client.checkLock(lock[0]).getState().toString());
    step("showLocks (this database's)", () -> {
      ShowLocksRequest req = new ShowLocksRequest();
      req.setDbname(db);
      return client.showLocks(req).getLocks().stream().map(l -> list(String.valueOf(l.getDbname()),
          String.valueOf(l.getTablename()), String.valueOf(l.getPartname()), l.getState().toString(),
          l.getType().toString(), rel(l.getTxnid()), l.getLockid() - firstLock, String.valueOf(l.getUser())))
          .collect(Collectors.toList());
    });
    step("heartbeat", () -> { client.heartbeat(txn[0], lock[0]); return null; });
    step("allocateTableWriteId", () -> client.allocateTableWriteId(txn[0], db, "t"));
    step("allocateTableWriteId again", () -> client.allocateTableWriteId(txn[0], db, "t"));
    step("getValidWriteIds open", () -> client.getValidWriteIds(db + ".t").writeToString().substring(db.length()));
    step("getLatestTxnIdInConflict", () -> client.getLatestTxnIdInConflict(txn[0]));
    step("addDynamicPartitions", () -> {
      client.addDynamicPartitions(txn[0], 1, db, "t", list("p=x/q=1", "p=y/q=1"), DataOperationType.INSERT);
      return null;
    });
    step("addDynamicPartitions unknown transaction", () -> {
      client.addDynamicPartitions(txn[0] + 1000000, 1, db, "t", list("p=x/q=1"), DataOperationType.INSERT);
      return null;
    });
    step("commitTxn", () -> { client.commitTxn(txn[0]); return null; });
    step("commitTxn again", () -> { client.commitTxn(txn[0]); return null; });
    step("addDynamicPartitions committed transaction", () -> {
      client.addDynamicPartitions(txn[0], 1, db, "t", list("p=x/q=1"), DataOperationType.INSERT);
      return null;
    });
    step("checkLock after commit", () -> client.checkLock(lock[0]).getState().toString());
    step("getValidWriteIds committed", () -> client.getValidWriteIds(db + ".t").writeToString().substring(db.length()));
    step("getMaxAllocatedWriteId", () -> client.getMaxAllocatedWriteId(db, "t"));
    step("openTxns", () -> {
      List<Long> ids = client.openTxns(user, 2).getTxn_ids();
      two[0] = ids.get(0);
      two[1] = ids.get(1);
      return ids.stream().map(Hive4ClientSequence::rel).collect(Collectors.toList());
    });
    step("rollbackTxn", () -> { client.rollbackTxn(two[0]); return null; });
    step("abortTxns", () -> { client.abortTxns(list(two[1])); return null; });
    step("heartbeatTxnRange", () -> {
      HeartbeatTxnRangeResponse r = client.heartbeatTxnRange(two[0], two[1]);
      return list(r.getAborted().stream().map(Hive4ClientSequence::rel).sorted().collect(Collectors.toList()),
          r.getNosuch().stream().map(Hive4ClientSequence::rel).sorted().collect(Collectors.toList()));
    });
    step("getValidTxns", () -> {
      org.apache.hadoop.hive.common.ValidTxnList v = client.getValidTxns();
      return list(v.isTxnValid(firstTxn), v.isTxnValid(two[0]), v.isTxnValid(two[1]));
    });
    step("getOpenTxns (this test's)", () -> txnStates(client.getOpenTxns()));
    step("lock without a transaction", () -> {
      LockComponent c = new LockComponent(LockType.EXCLUSIVE, LockLevel.DB, db);
      c.setOperationType(DataOperationType.NO_TXN);
      LockResponse r = client.lock(new LockRequest(list(c), user, "localhost"));
      lock[0] = r.getLockid();
      return r.getState().toString();
    });
    step("unlock", () -> { client.unlock(lock[0]); return null; });
    step("unlock again", () -> { client.unlock(lock[0]); return null; });
    step("compact2", () -> {
      CompactionResponse r = client.compact2(db, "t", "p=x/q=1", CompactionType.MAJOR, null);
      return list(r.getState(), r.isAccepted());
    });
    step("compact2 again", () -> {
      CompactionResponse r = client.compact2(db, "t", "p=x/q=1", CompactionType.MINOR, null);
      return list(r.getState(), r.isAccepted());
    });
    step("compact (the old form)", () -> {
      client.compact(db, "t", "p=y/q=1", CompactionType.MINOR);
      return null;
    });
    step("compact2 missing table", () -> {
      CompactionResponse r = client.compact2(db, "nosuch", null, CompactionType.MAJOR, null);
      return list(r.getState(), r.isAccepted());
    });
    step("showCompactions (this database's)", () -> {
      ShowCompactRequest req = new ShowCompactRequest();
      req.setDbName(db);
      return client.showCompactions(req).getCompacts().stream().map(e -> list(e.getDbname(), e.getTablename(),
          String.valueOf(e.getPartitionname()), e.getType().toString(), e.getState(), String.valueOf(e.getPoolName())))
          .collect(Collectors.toList());
    });
  }

  // the sequence's transactions in an open-transactions answer: open, aborted or gone
  private static List<Object> txnStates(GetOpenTxnsResponse r) {
    List<Object> out = new ArrayList<>();
    List<Long> open = r.getOpen_txns();
    java.util.BitSet aborted = java.util.BitSet.valueOf(r.bufferForAbortedBits());
    for (long t : list(firstTxn, two[0], two[1])) {
      int at = open.indexOf(t);
      out.add(at < 0 ? "gone" : aborted.get(at) ? "aborted" : "open");
    }
    return out;
  }

  private static void catalogs() {
    String cat = "c_" + token, cdb = "d_" + token;
    step("createCatalog", () -> {
      String wh = new org.apache.hadoop.fs.Path(client.getDatabase(db).getLocationUri()).getParent().toString();
      Catalog c = new Catalog(cat, wh + "/" + cat + ".cat");
      c.setDescription("made by Hive 4's client");
      client.createCatalog(c);
      return client.getCatalog(cat);
    });
    step("createCatalog again", () -> { client.createCatalog(client.getCatalog(cat)); return null; });
    step("createCatalog without a location", () -> { client.createCatalog(new Catalog(cat + "x", null)); return null; });
    step("getCatalog missing", () -> client.getCatalog(cat + "_nosuch"));
    step("getCatalog hive", () -> client.getCatalog("hive").getName());
    step("getCatalogs (this test's)", () -> client.getCatalogs().stream().filter(n -> n.equals("hive") || n.equals(cat))
        .sorted().collect(Collectors.toList()));
    step("alterCatalog", () -> {
      Catalog c = client.getCatalog(cat);
      c.setDescription("altered");
      client.alterCatalog(cat, c);
      return client.getCatalog(cat);
    });
    step("alterCatalog rename", () -> {
      Catalog c = client.getCatalog(cat);
      c.setName(cat + "r");
      client.alterCatalog(cat, c);
      return null;
    });
    step("createDatabase in the catalog", () -> {
      Database d = new Database(cdb, "in a catalog", null, new HashMap<>());
      d.setCatalogName(cat);
      client.createDatabase(d);
      return client.getDatabase(cat, cdb);
    });
    step("getAllDatabases of the catalog", () -> client.getAllDatabases(cat));
    step("getDatabase of the catalog in hive", () -> client.getDatabase("hive", cdb));
    step("dropCatalog holding a database", () -> { client.dropCatalog(cat); return null; });
    step("dropCatalog hive", () -> { client.dropCatalog("hive"); return null; });
    step("dropCatalog missing", () -> { client.dropCatalog(cat + "_nosuch"); return null; });
    step("dropDatabase of the catalog", () -> { client.dropDatabase(cat, cdb, true, false, true); return null; });
    step("dropCatalog", () -> { client.dropCatalog(cat); return client.getCatalogs().contains(cat); });
    step("getCatalog dropped", () -> client.getCatalog(cat));
  }

  private static void exchange() {
    List<FieldSchema> keys = list(col("p", "string"), col("q", "int"));
    step("createTable for exchanges", () -> {
      client.createTable(table("ex_src", list(col("a", "int"), col("b", "string")), keys));
      client.createTable(table("ex_dst", list(col("a", "int"), col("b", "string")), keys));
      client.createTable(table("ex_other", list(col("a", "bigint")), keys));
      return null;
    });
    step("add_partitions_pspec", () -> {
      List<Partition> ps = new ArrayList<>();
      for (String[] v : new String[][] {{"x", "1"}, {"x", "2"}, {"y", "1"}, {"z", "1"}}) {
        Partition p = partition(v);
        p.setTableName("ex_src");
        p.setCatName("hive");
        ps.add(p);
      }
      PartitionSpec spec = new PartitionSpec(db, "ex_src", null);
      spec.setCatName("hive");
      spec.setPartitionList(new PartitionListComposingSpec(ps));
      return client.add_partitions_pspec(org.apache.hadoop.hive.metastore.partition.spec.PartitionSpecProxy.Factory
          .get(spec));
    });
    step("add_partition to the destination", () -> {
      Partition p = partition("z", "1");
      p.setTableName("ex_dst");
      return client.add_partition(p);
    });
    // The refusals first: Hive opens its transaction before these checks and leaves it open when one fails,
    // so what that connection writes next is rolled back with the next call that fails and rolls back
    // (createFunction again, below).
    Function xf = new Function("xf_" + token, db, "com.example.Udf", "tester", PrincipalType.USER, 0,
        FunctionType.JAVA, new ArrayList<>());
    step("createFunction for exchanges", () -> { client.createFunction(xf); return null; });
    step("exchange_partitions onto an existing one", () ->
        client.exchange_partitions(new HashMap<>(Map.of("p", "z")), db, "ex_src", db, "ex_dst"));
    step("exchange_partitions different schemas", () ->
        client.exchange_partitions(new HashMap<>(Map.of("p", "z")), db, "ex_src", db, "ex_other"));
    step("exchange_partitions missing table", () ->
        client.exchange_partitions(new HashMap<>(Map.of("p", "z")), db, "ex_src", db, "nosuch"));
    step("exchange_partitions no such partition", () ->
        client.exchange_partitions(new HashMap<>(Map.of("p", "zz")), db, "ex_src", db, "ex_dst"));
    step("createFunction again (ends Hive's open transaction)", () -> { client.createFunction(xf); return null; });
    step("dropFunction for exchanges", () -> { client.dropFunction(db, "xf_" + token); return null; });
    step("exchange_partition", () ->
        client.exchange_partition(new HashMap<>(Map.of("p", "x", "q", "1")), db, "ex_src", db, "ex_dst"));
    step("exchange_partitions", () ->
        client.exchange_partitions(new HashMap<>(Map.of("p", "y")), db, "ex_src", db, "ex_dst"));
    step("exchange_partitions onto an existing directory", () ->
        client.exchange_partitions(new HashMap<>(Map.of("p", "x")), db, "ex_src", db, "ex_dst"));
    step("listPartitionNames after exchanges", () -> list(client.listPartitionNames(db, "ex_src", (short) -1),
        client.listPartitionNames(db, "ex_dst", (short) -1)));
    step("exchanged partition", () -> client.getPartition(db, "ex_dst", list("y", "1")));
  }

  private static void metastore() {
    step("getConfigValue", () -> client.getConfigValue("hive.metastore.nosuch.key." + token, "dflt"));
    step("getConfigValue not hive", () -> client.getConfigValue("fs.nosuch." + token, "dflt"));
    step("getMetaConf", () -> client.getMetaConf("metastore.partition.name.whitelist.pattern"));
    step("getMetaConf unknown", () -> client.getMetaConf("metastore.nosuch." + token));
    step("setMetaConf unknown", () -> { client.setMetaConf("metastore.nosuch." + token, "x"); return null; });
    step("getMetastoreDbUuid (set)", () -> !client.getMetastoreDbUuid().isEmpty());
    step("flushCache", () -> { client.flushCache(); return null; });
    step("fireListenerEvent", () -> {
      FireEventRequest req = new FireEventRequest(true, FireEventRequestData.insertData(
          new InsertEventRequestData(list("file:/tmp/" + token + "/f1"))));
      req.setDbName(db);
      req.setTableName("t");
      req.setPartitionVals(list("x", "1"));
      req.setCatName("hive");
      client.fireListenerEvent(req);
      return null;
    });
  }

  // ------------------------------------------------------------------ the old forms

  // A raw Thrift connection (Hive 4.0.1's generated ThriftHiveMetastore.Client, set_ugi as Hive's client sends
  // it): the methods Hive 4's HiveMetaStoreClient replaced by request forms, which older clients still send.
  private static ThriftHiveMetastore.Client connect() throws Exception {
    org.apache.thrift.transport.TSocket socket = new org.apache.thrift.transport.TSocket("127.0.0.1", port);
    socket.open();
    ThriftHiveMetastore.Client c = new ThriftHiveMetastore.Client(new org.apache.thrift.protocol.TBinaryProtocol(socket));
    c.set_ugi(System.getProperty("user.name"), list());
    return c;
  }

  private static void disconnect(ThriftHiveMetastore.Client c) {
    c.getInputProtocol().getTransport().close();
  }

  private static EnvironmentContext env() {
    return new EnvironmentContext(new HashMap<>(Map.of("origin", "old form")));
  }

  private static Table getTable(ThriftHiveMetastore.Client c, String name) throws Exception {
    GetTableRequest req = new GetTableRequest(db, name);
    req.setCatName("hive");
    return c.get_table_req(req).getTable();
  }

  private static void oldForms() throws Exception {
    old = connect();
    try {
      oldDatabases();
      oldTables();
      oldPartitions();
      oldStatistics();
      oldPrivileges();
      step("old get_open_txns (this test's)", () -> txnStates(old.get_open_txns()));
      // no SASL here: both refuse (tests/test_kerberos.py issues, renews and cancels over SASL, ours only)
      step("old get_delegation_token without SASL", () -> old.get_delegation_token("tester", "tester"));
      step("old renew_delegation_token without SASL", () -> old.renew_delegation_token("nosuch"));
      step("old cancel_delegation_token without SASL", () -> { old.cancel_delegation_token("nosuch"); return null; });
      step("old drop_table", () -> {
        old.drop_table(db, "o3", true);
        old.drop_table_with_environment_context(db, "o2", true, env());
        return old.get_tables(db, "o*");
      });
      step("old drop_table missing", () -> { old.drop_table(db, "o2", true); return null; });
      oldRefusals();
    } finally {
      disconnect(old);
    }
  }

  // the old forms' refusals and catalog prefixes
  private static void oldRefusals() {
    String odb = db + "_o";
    step("old get_database with the catalog prefix", () -> old.get_database("@hive#" + db).getName());
    step("old get_tables with the catalog prefix", () -> old.get_tables("@hive#" + db, "o*"));
    step("old get_database upper case", () -> old.get_database(db.toUpperCase()).getName());
    step("old create_table in a missing database", () -> {
      Table t = table("x", list(col("a", "int")), list());
      t.setDbName(odb);
      old.create_table(t);
      return null;
    });
    step("old create_table bad column type", () -> {
      old.create_table(table("bad", list(col("a", "nosuchtype")), list()));
      return null;
    });
    step("old get_fields missing database", () -> old.get_fields_with_environment_context(odb, "o", env()));
    step("old get_partitions_by_filter bad", () -> old.get_partitions_by_filter(db, "o", "p = ", (short) -1));
    step("old get_partitions_by_filter missing table", () ->
        old.get_partitions_by_filter(db, "nosuch", "p = \"x\"", (short) -1));
    step("old get_partitions missing table", () -> old.get_partitions(db, "nosuch", (short) -1));
    step("old get_partition_names_ps max 1 (count)", () ->
        old.get_partition_names_ps(db, "o", list("x"), (short) 1).size());
    step("old get_partitions_with_auth missing table", () ->
        old.get_partitions_with_auth(db, "nosuch", (short) -1, "u", list("g")));
    step("old append_partition_by_name incomplete", () -> old.append_partition_by_name(db, "o", "p=v"));
    step("old add_partitions with a duplicate", () ->
        old.add_partitions(list(part("o", "v", "1"), part("o", "x", "1"))));
    step("old get_partition_names after the duplicate", () -> old.get_partition_names(db, "o", (short) -1));
    step("old alter_partition missing", () -> {
      Partition p = old.get_partition(db, "o", list("x", "1"));
      p.setValues(list("x", "99"));
      old.alter_partition(db, "o", p);
      return null;
    });
    step("old rename_partition missing", () -> {
      Partition p = old.get_partition(db, "o", list("x", "1"));
      p.setValues(list("x", "98"));
      old.rename_partition(db, "o", list("x", "97"), p);
      return null;
    });
    step("old drop_partition_by_name missing", () -> old.drop_partition_by_name(db, "o", "p=no/q=0", true));
    step("old truncate_table missing", () -> { old.truncate_table(db, "nosuch", null); return null; });
    step("old update_partition_column_statistics missing partition", () ->
        old.update_partition_column_statistics(stats("o", "p=no/q=0", longStats("a", 1, 5, 1, 3))));
    step("old update_table_column_statistics missing column", () ->
        old.update_table_column_statistics(stats("o", (String) null, longStats("nosuch", 1, 5, 1, 3))));
    step("old get_table_column_statistics missing table", () -> old.get_table_column_statistics(db, "nosuch", "a"));
    step("old grant_role missing role", () ->
        old.grant_role("nosuch_" + token, "u_" + token, PrincipalType.USER, "admin", PrincipalType.ROLE, false));
    step("old drop_database not empty", () -> { old.drop_database(db, false, false); return null; });
    step("old alter_database missing", () -> {
      old.alter_database(odb, new Database(odb, "x", null, new HashMap<>()));
      return null;
    });
  }

  private static void oldDatabases() {
    String odb = db + "_o";
    Database d = new Database(odb, "made by the old form", null, new HashMap<>(Map.of("k", "v")));
    d.setOwnerName("tester");
    d.setOwnerType(PrincipalType.USER);
    step("old create_database", () -> { old.create_database(d); return old.get_database(odb); });
    step("old create_database again", () -> { old.create_database(d); return null; });
    step("old get_database missing", () -> old.get_database(odb + "_nosuch"));
    step("old get_all_databases (this test's)", () -> old.get_all_databases().stream()
        .filter(n -> n.equalsIgnoreCase(db) || n.equalsIgnoreCase(odb)).sorted().collect(Collectors.toList()));
    step("old alter_database", () -> {
      Database changed = old.get_database(odb);
      changed.setDescription("altered");
      changed.putToParameters("k2", "v2");
      old.alter_database(odb, changed);
      return old.get_database(odb);
    });
    step("old drop_database", () -> { old.drop_database(odb, true, false); return old.get_all_databases().contains(odb); });
    step("old drop_database missing", () -> { old.drop_database(odb, true, false); return null; });
  }

  private static void oldTables() {
    step("old create_table", () -> {
      old.create_table(table("o", list(col("a", "int"), col("b", "string")), list(col("p", "string"), col("q", "int"))));
      return getTable(old, "o");
    });
    step("old create_table again", () -> { old.create_table(table("o", list(col("a", "int")), list())); return null; });
    step("old create_table_with_environment_context", () -> {
      old.create_table_with_environment_context(table("o2", list(col("a", "int")), list()), env());
      return getTable(old, "o2");
    });
    step("old create_table_with_constraints", () -> {
      SQLPrimaryKey pk = new SQLPrimaryKey(db, "o3", "id", 1, "o3_pk", false, false, true);
      pk.setCatName("hive");
      SQLNotNullConstraint nn = new SQLNotNullConstraint("hive", db, "o3", "n", "o3_nn", false, false, false);
      SQLCheckConstraint ck = new SQLCheckConstraint("hive", db, "o3", "id", "id > 0", "o3_ck", false, false, false);
      old.create_table_with_constraints(table("o3", list(col("id", "int"), col("n", "string")), list()),
          list(pk), list(), list(), list(nn), list(), list(ck));
      return old.get_all_table_constraints(new AllTableConstraintsRequest(db, "o3", "hive"));
    });
    step("old get_tables", () -> old.get_tables(db, "o*"));
    step("old get_schema", () -> old.get_schema(db, "o"));
    step("old get_schema missing", () -> old.get_schema(db, "nosuch"));
    step("old get_fields_with_environment_context", () -> old.get_fields_with_environment_context(db, "o", env()));
    step("old alter_table", () -> {
      Table t = getTable(old, "o2");
      t.getSd().addToCols(col("y", "double"));
      old.alter_table(db, "o2", t);
      return getTable(old, "o2");
    });
    step("old alter_table_with_environment_context", () -> {
      Table t = getTable(old, "o2");
      t.putToParameters("altered", "yes");
      old.alter_table_with_environment_context(db, "o2", t, env());
      return getTable(old, "o2");
    });
    step("old alter_table missing", () -> { old.alter_table(db, "nosuch", getTable(old, "o2")); return null; });
  }

  private static void oldPartitions() {
    String user = "u_" + token;
    step("old add_partition", () -> old.add_partition(part("o", "x", "1")));
    step("old add_partition again", () -> old.add_partition(part("o", "x", "1")));
    step("old add_partition_with_environment_context", () ->
        old.add_partition_with_environment_context(part("o", "x", "2"), env()));
    step("old add_partitions", () -> old.add_partitions(list(part("o", "y", "1"), part("o", "y", "2"))));
    step("old append_partition", () -> old.append_partition(db, "o", list("z", "1")));
    step("old append_partition_with_environment_context", () ->
        old.append_partition_with_environment_context(db, "o", list("z", "2"), env()));
    step("old append_partition_by_name", () -> old.append_partition_by_name(db, "o", "p=w/q=1"));
    step("old append_partition_by_name_with_environment_context", () ->
        old.append_partition_by_name_with_environment_context(db, "o", "p=w/q=2", env()));
    step("old append_partition again", () -> old.append_partition(db, "o", list("z", "1")));
    step("old get_partition", () -> old.get_partition(db, "o", list("x", "1")));
    step("old get_partition missing", () -> old.get_partition(db, "o", list("x", "9")));
    step("old get_partitions", () -> old.get_partitions(db, "o", (short) -1));
    step("old get_partitions max 2", () -> old.get_partitions(db, "o", (short) 2));
    step("old get_partitions_with_auth", () -> old.get_partitions_with_auth(db, "o", (short) -1, user, list("g")));
    step("old get_partitions_ps", () -> old.get_partitions_ps(db, "o", list("x"), (short) -1));
    step("old get_partitions_ps_with_auth", () ->
        old.get_partitions_ps_with_auth(db, "o", list("", "1"), (short) -1, user, list("g")));
    step("old get_partition_names", () -> old.get_partition_names(db, "o", (short) -1));
    step("old get_partition_names_ps", () -> old.get_partition_names_ps(db, "o", list("z"), (short) -1));
    step("old get_partition_names_req", () -> {  // no expression (the byte Hive's client sends for none)
      PartitionsByExprRequest req = new PartitionsByExprRequest(db, "o", java.nio.ByteBuffer.wrap(new byte[] {-1}));
      req.setCatName("hive");
      req.setOrder("1,0:-+");
      return old.get_partition_names_req(req);
    });
    step("old get_partitions_by_filter", () -> old.get_partitions_by_filter(db, "o", "p = \"x\" or q > 1", (short) -1));
    step("old get_partitions_by_names", () ->
        old.get_partitions_by_names(db, "o", list("p=y/q=1", "p=x/q=1", "p=no/q=0")));
    step("old alter_partition", () -> {
      Partition p = old.get_partition(db, "o", list("x", "1"));
      p.putToParameters("altered", "yes");
      old.alter_partition(db, "o", p);
      return old.get_partition(db, "o", list("x", "1"));
    });
    step("old alter_partition_with_environment_context", () -> {
      Partition p = old.get_partition(db, "o", list("x", "2"));
      p.putToParameters("altered", "env");
      old.alter_partition_with_environment_context(db, "o", p, env());
      return old.get_partition(db, "o", list("x", "2"));
    });
    step("old alter_partitions", () -> {
      List<Partition> ps = old.get_partitions_by_names(db, "o", list("p=y/q=1", "p=y/q=2"));
      for (Partition p : ps) {
        p.putToParameters("bulk", "yes");
      }
      old.alter_partitions(db, "o", ps);
      return old.get_partitions_by_names(db, "o", list("p=y/q=1", "p=y/q=2"));
    });
    step("old alter_partitions_with_environment_context", () -> {
      List<Partition> ps = old.get_partitions_by_names(db, "o", list("p=y/q=1", "p=y/q=2"));
      for (Partition p : ps) {
        p.putToParameters("bulk", "env");
      }
      old.alter_partitions_with_environment_context(db, "o", ps, env());
      return old.get_partitions_by_names(db, "o", list("p=y/q=1", "p=y/q=2"));
    });
    step("old alter_table_with_cascade", () -> {
      Table t = getTable(old, "o");
      t.getSd().addToCols(col("c", "string"));
      old.alter_table_with_cascade(db, "o", t, true);
      return old.get_partition(db, "o", list("x", "1"));
    });
    step("old rename_partition", () -> {
      Partition p = old.get_partition(db, "o", list("w", "1"));
      p.setValues(list("w", "10"));
      old.rename_partition(db, "o", list("w", "1"), p);
      return old.get_partition_names(db, "o", (short) -1);
    });
    step("old rename_partition onto an existing one", () -> {
      Partition p = old.get_partition(db, "o", list("w", "10"));
      p.setValues(list("x", "1"));
      old.rename_partition(db, "o", list("w", "10"), p);
      return null;
    });
    step("old drop_partition", () -> old.drop_partition(db, "o", list("w", "10"), true));
    step("old drop_partition_with_environment_context", () ->
        old.drop_partition_with_environment_context(db, "o", list("w", "2"), true, env()));
    step("old drop_partition_by_name", () -> old.drop_partition_by_name(db, "o", "p=z/q=1", true));
    step("old drop_partition_by_name_with_environment_context", () ->
        old.drop_partition_by_name_with_environment_context(db, "o", "p=z/q=2", true, env()));
    step("old drop_partition missing", () -> old.drop_partition(db, "o", list("w", "10"), true));
    step("old drop_partitions_req", () -> {  // by names (Hive's client sends serialized expressions only)
      DropPartitionsRequest req = new DropPartitionsRequest(db, "o", RequestPartsSpec.names(list("p=y/q=1", "p=y/q=2")));
      req.setCatName("hive");
      req.setDeleteData(true);
      req.setNeedResult(true);
      return old.drop_partitions_req(req);
    });
    step("old drop_partitions_req missing", () -> {
      DropPartitionsRequest req = new DropPartitionsRequest(db, "o", RequestPartsSpec.names(list("p=no/q=0")));
      req.setCatName("hive");
      req.setIfExists(false);
      return old.drop_partitions_req(req);
    });
    step("old get_partition_names after drops", () -> old.get_partition_names(db, "o", (short) -1));
  }

  private static void oldStatistics() {
    step("old update_table_column_statistics", () ->
        old.update_table_column_statistics(stats("o", (String) null, longStats("a", 1, 9, 0, 5))));
    step("old get_table_column_statistics", () -> old.get_table_column_statistics(db, "o", "a"));
    step("old get_table_column_statistics none", () -> old.get_table_column_statistics(db, "o", "b"));
    step("old update_partition_column_statistics", () ->
        old.update_partition_column_statistics(stats("o", "p=x/q=1", longStats("a", 1, 5, 1, 3))));
    step("old get_partition_column_statistics", () -> old.get_partition_column_statistics(db, "o", "p=x/q=1", "a"));
    step("old get_partition_column_statistics none", () ->
        old.get_partition_column_statistics(db, "o", "p=x/q=2", "a"));
    step("old table with statistics' parameters", () -> getTable(old, "o"));
    step("old truncate_table partitions", () -> {
      old.truncate_table(db, "o", list("p=x/q=2"));
      return old.get_partition(db, "o", list("x", "2"));
    });
    step("old truncate_table", () -> { old.truncate_table(db, "o2", null); return getTable(old, "o2"); });
  }

  private static void oldPrivileges() {
    String role = "ro_" + token, user = "u_" + token;
    HiveObjectRef oref = ref(HiveObjectType.TABLE, "o", null, null);
    step("old create_role", () -> old.create_role(new Role(role, 0, "admin")));
    step("old grant_role", () -> old.grant_role(role, user, PrincipalType.USER, "admin", PrincipalType.ROLE, false));
    step("old grant_role again", () -> old.grant_role(role, user, PrincipalType.USER, "admin", PrincipalType.ROLE, false));
    step("old list_roles", () -> old.list_roles(user, PrincipalType.USER));
    step("old revoke_role", () -> old.revoke_role(role, user, PrincipalType.USER));
    step("old revoke_role again", () -> old.revoke_role(role, user, PrincipalType.USER));
    step("old grant_privileges", () -> old.grant_privileges(new PrivilegeBag(list(
        grant(oref, user, PrincipalType.USER, "SELECT"), grant(oref, role, PrincipalType.ROLE, "INSERT")))));
    step("old grant_privileges again", () -> old.grant_privileges(new PrivilegeBag(list(
        grant(oref, user, PrincipalType.USER, "SELECT")))));
    step("old list_privileges", () -> old.list_privileges(user, PrincipalType.USER, oref));
    step("old revoke_privileges", () -> list(
        old.revoke_privileges(new PrivilegeBag(list(grant(oref, user, PrincipalType.USER, "SELECT")))),
        old.list_privileges(user, PrincipalType.USER, oref).size()));
    step("old revoke_privileges again", () ->
        old.revoke_privileges(new PrivilegeBag(list(grant(oref, user, PrincipalType.USER, "SELECT")))));
    step("old drop_role", () -> old.drop_role(role));
  }

  interface OwnCall {
    Object run(ThriftHiveMetastore.Client c) throws Exception;
  }

  // a step on a connection of its own, which ends with it
  private static void ownStep(String name, OwnCall call) throws Exception {
    ThriftHiveMetastore.Client own = connect();
    try {
      step(name, () -> call.run(own));
    } finally {
      disconnect(own);
    }
  }

  // Calls after which the reference's connection loses its later writes (Hive's bug: they leave its
  // transaction open), each on a connection of its own; the main connection reads the result.
  private static void ownConnections() throws Exception {
    step("add_partition for set_aggr_stats_for", () -> client.add_partition(part("o", "s", "1")));
    ownStep("set_aggr_stats_for (own connection)", c -> {
      SetPartitionsStatsRequest req = new SetPartitionsStatsRequest(list(
          stats("o", "p=x/q=1", longStats("a", 0, 2, 0, 2)), stats("o", "p=s/q=1", longStats("a", 3, 4, 0, 2))));
      req.setEngine("hive");
      return c.set_aggr_stats_for(req);
    });
    step("partitions after set_aggr_stats_for", () -> client.getPartitionsByNames(db, "o", list("p=x/q=1", "p=s/q=1")));
    step("statistics after set_aggr_stats_for", () ->
        client.getPartitionColumnStatistics(db, "o", list("p=x/q=1", "p=s/q=1"), list("a"), "hive"));
    // calls on which the reference fails internally
    step("addCheckConstraint for a taken name", () -> {
      client.addCheckConstraint(list(new SQLCheckConstraint("hive", db, "o", "a", "a > 0", "o_ck", false, false,
          false)));
      return null;
    });
    ownStep("addCheckConstraint of a taken name (own connection)", c -> {
      c.add_check_constraint(new AddCheckConstraintRequest(list(new SQLCheckConstraint("hive", db, "o", "a", "a < 9",
          "o_ck", false, false, false))));
      return null;
    });
    ownStep("dropConstraint missing (own connection)", c -> {
      DropConstraintRequest req = new DropConstraintRequest(db, "o", "nosuch");
      req.setCatName("hive");
      c.drop_constraint(req);
      return null;
    });
    ownStep("drop_partitions_req by expression (own connection)", c -> {
      DropPartitionsRequest req = new DropPartitionsRequest(db, "o", RequestPartsSpec.exprs(list(
          new DropPartitionsExpr(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3})))));
      req.setCatName("hive");
      return c.drop_partitions_req(req);
    });
    step("getCheckConstraints after", () -> client.getCheckConstraints(new CheckConstraintsRequest("hive", db, "o")));
    step("listPartitionNames after", () -> client.listPartitionNames(db, "o", (short) -1));
  }

  // features ours does not have: one call of each that Hive 4's client can make (what the reference answers
  // is not compared; allowlist.JAVA_CLIENT_REFUSED)
  private static void refused() throws Exception {
    step("getAllResourcePlans", () -> client.getAllResourcePlans("hive"));
    step("getAllStoredProcedures", () -> client.getAllStoredProcedures(new ListStoredProcedureRequest("hive")));
    step("getAllDataConnectorNames", () -> client.getAllDataConnectorNames());
    step("getScheduledQuery", () -> client.getScheduledQuery(new ScheduledQueryKey("s_" + token, "ns")));
    step("getReplicationMetrics", () -> client.getReplicationMetrics(new GetReplicationMetricsRequest()));
    step("getSerDe", () -> client.getSerDe("s_" + token));
    step("clearFileMetadata", () -> { client.clearFileMetadata(list(1L)); return null; });
    step("getAllTokenIdentifiers", () -> client.getAllTokenIdentifiers());
    step("getRuntimeStats", () -> client.getRuntimeStats(0, -1));
    step("getMaterializedViewsForRewriting", () -> client.getMaterializedViewsForRewriting(db));
    step("getProperties", () -> client.getProperties("hive", "p_" + token, null));
    step("getLatestCommittedCompactionInfo", () ->
        client.getLatestCommittedCompactionInfo(new GetLatestCommittedCompactionInfoRequest(db, "t")));
    // the two features Hive 4's client has no call for, through the generated Thrift client
    ownStep("get_type (Thrift)", c -> c.get_type("t_" + token));
    ownStep("translate_table_dryrun (Thrift)", c ->
        c.translate_table_dryrun(new CreateTableRequest(table("tt", list(col("a", "int")), list()))));
  }

  private static void notificationsStart() {
    step("getCurrentNotificationEventId", () -> {
      firstEvent = client.getCurrentNotificationEventId().getEventId();
      return null;
    });
  }

  private static void notificationsEnd() {
    step("getNextNotification (this database's)", () -> {
      NotificationEventRequest req = new NotificationEventRequest(firstEvent);
      req.setMaxEvents(1000);
      req.setCatName("hive");
      req.setDbName(db);
      return client.getNextNotification(req, true, null).getEvents().stream()
          .map(e -> e.getEventType() + " " + String.valueOf(e.getTableName())).collect(Collectors.toList());
    });
    step("getNotificationEventsCount (this database's)", () -> {
      NotificationEventsCountRequest req = new NotificationEventsCountRequest(firstEvent, db);
      req.setCatName("hive");
      return client.getNotificationEventsCount(req).getEventsCount();
    });
    step("getCurrentNotificationEventId moved on", () ->
        client.getCurrentNotificationEventId().getEventId() >= firstEvent);
  }

  @SafeVarargs
  private static <T> List<T> list(T... items) {  // mutable: the client changes and probes what it is given
    return new ArrayList<>(Arrays.asList(items));
  }

  private static List<String> mine(List<String> names) {
    return names.stream().filter(n -> n.equalsIgnoreCase(db)).collect(Collectors.toList());
  }

  // ------------------------------------------------------------------ output

  private static void step(String name, Call call) {
    ObjectNode out = JSON.createObjectNode();
    out.put("step", name);
    long start = System.nanoTime();
    try {
      answer(out, call.run());
    } catch (TApplicationException e) {
      out.put("error", "TApplicationException");
      out.put("appType", e.getType());
      out.put("message", String.valueOf(e.getMessage()));
    } catch (Throwable e) {
      out.put("error", e.getClass().getSimpleName());
      out.put("message", String.valueOf(e.getMessage()));
    }
    out.put("ms", (System.nanoTime() - start) / 1000000);
    try {
      System.out.println(JSON.writeValueAsString(out));
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  private static void answer(ObjectNode out, Object value) throws Exception {
    if (value instanceof TBase) {
      out.put("struct", value.getClass().getSimpleName());
      out.put("tjson", tjson.toString((TBase<?, ?>) value));
    } else if (value instanceof List && !((List<?>) value).isEmpty() && ((List<?>) value).get(0) instanceof TBase) {
      out.put("list", ((List<?>) value).get(0).getClass().getSimpleName());
      ArrayNode items = out.putArray("tjson");
      for (Object item : (List<?>) value) {
        items.add(tjson.toString((TBase<?, ?>) item));
      }
    } else if (value instanceof Map && !((Map<?, ?>) value).isEmpty()
        && ((Map<?, ?>) value).values().iterator().next() instanceof List) {
      Map<String, List<String>> encoded = new LinkedHashMap<>();
      String cls = null;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        List<String> items = new ArrayList<>();
        for (Object item : (List<?>) e.getValue()) {
          cls = item.getClass().getSimpleName();
          items.add(tjson.toString((TBase<?, ?>) item));
        }
        encoded.put(String.valueOf(e.getKey()), items);
      }
      out.put("map", cls);
      out.set("tjson", JSON.valueToTree(encoded));
    } else {
      out.set("value", JSON.valueToTree(value));
    }
  }
}
