// Hive 4's own metastore client (HiveMetaStoreClient 4.0.1) with Kerberos, as a Kerberized Spark,
// Hive or Trino deployment configures it: hadoop.security.authentication=kerberos,
// metastore.sasl.enabled=true and the service principal hive/_HOST@REALM (_HOST: the URI's host).
// The client logs in from a keytab, or from the ticket cache in KRB5CCNAME when no keytab is given.
//
// usage: java -Djava.security.krb5.conf=F -cp <hive4 classpath>:<dir> KerberosClient <uri> <service principal>
//            <table to create in default> [principal keytab]
// Prints "owner <owner of the created table>" or "error <exception class>: <message> | <root cause>".
import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import java.util.ArrayList;
import java.util.Collections;
import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.metastore.api.SerDeInfo;
import org.apache.hadoop.hive.metastore.api.StorageDescriptor;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.conf.MetastoreConf;
import org.apache.hadoop.security.UserGroupInformation;

public class KerberosClient {
  public static void main(String[] args) {
    Configuration conf = MetastoreConf.newMetastoreConf();
    conf.set("hadoop.security.authentication", "kerberos");
    MetastoreConf.setVar(conf, MetastoreConf.ConfVars.THRIFT_URIS, args[0]);
    MetastoreConf.setLongVar(conf, MetastoreConf.ConfVars.THRIFT_CONNECTION_RETRIES, 1);
    MetastoreConf.setBoolVar(conf, MetastoreConf.ConfVars.USE_THRIFT_SASL, true);
    MetastoreConf.setVar(conf, MetastoreConf.ConfVars.KERBEROS_PRINCIPAL, args[1]);
    try {
      UserGroupInformation.setConfiguration(conf);
      UserGroupInformation ugi = args.length > 4
          ? UserGroupInformation.loginUserFromKeytabAndReturnUGI(args[3], args[4])
          : UserGroupInformation.getLoginUser();
      String owner = ugi.doAs((PrivilegedExceptionAction<String>) () -> {
        IMetaStoreClient client = new HiveMetaStoreClient(conf);
        try {
          StorageDescriptor sd = new StorageDescriptor();
          sd.setCols(new ArrayList<>(Collections.singletonList(new FieldSchema("id", "bigint", null))));
          sd.setSerdeInfo(new SerDeInfo(null, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
              new java.util.HashMap<>()));
          sd.setInputFormat("org.apache.hadoop.mapred.TextInputFormat");
          sd.setOutputFormat("org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat");
          Table t = new Table();
          t.setDbName("default");
          t.setTableName(args[2]);
          t.setSd(sd);
          t.setPartitionKeys(new ArrayList<>());
          t.setParameters(new java.util.HashMap<>());
          t.setTableType("MANAGED_TABLE");
          client.createTable(t);
          return client.getTable("default", args[2]).getOwner();
        } finally {
          client.close();
        }
      });
      System.out.println("owner " + owner);
    } catch (Throwable e) {
      Throwable t = e;
      while (t.getCause() != null) {
        t = t.getCause();
      }
      System.out.println("error " + e.getClass().getSimpleName() + ": " + e.getMessage() + " | " + t.getMessage());
    }
  }
}
