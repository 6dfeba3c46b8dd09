// Hive 4's own metastore client (HiveMetaStoreClient 4.0.1) over TLS with a truststore and, when a
// user is given, SASL PLAIN (metastore.client.auth.mode=PLAIN; the password is looked up with
// Configuration.getPassword(user), which falls back to the configuration value of that name).
//
// usage: java -cp <hive4 classpath>:<dir> SecureClient <port> <truststore> <storepass> <db> [user password]
// Prints "owner <owner of db>" or "error <exception class>: <message>".
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import org.apache.hadoop.hive.metastore.conf.MetastoreConf;

public class SecureClient {
  public static void main(String[] args) {
    Configuration conf = MetastoreConf.newMetastoreConf();
    MetastoreConf.setVar(conf, MetastoreConf.ConfVars.THRIFT_URIS, "thrift://127.0.0.1:" + args[0]);
    MetastoreConf.setLongVar(conf, MetastoreConf.ConfVars.THRIFT_CONNECTION_RETRIES, 1);
    MetastoreConf.setBoolVar(conf, MetastoreConf.ConfVars.USE_SSL, true);
    MetastoreConf.setVar(conf, MetastoreConf.ConfVars.SSL_TRUSTSTORE_PATH, args[1]);
    MetastoreConf.setVar(conf, MetastoreConf.ConfVars.SSL_TRUSTSTORE_PASSWORD, args[2]);
    if (args.length > 5) {
      MetastoreConf.setVar(conf, MetastoreConf.ConfVars.METASTORE_CLIENT_AUTH_MODE, "PLAIN");
      MetastoreConf.setVar(conf, MetastoreConf.ConfVars.METASTORE_CLIENT_PLAIN_USERNAME, args[4]);
      conf.set(args[4], args[5]);
    } else {  // else the first call is set_ugi, whose failure (our reason) the client only logs
      MetastoreConf.setBoolVar(conf, MetastoreConf.ConfVars.EXECUTE_SET_UGI, false);
    }
    try {
      IMetaStoreClient client = new HiveMetaStoreClient(conf);
      System.out.println("owner " + client.getDatabase(args[3]).getOwnerName());
      client.close();
    } catch (Exception e) {
      Throwable t = e;
      while (t.getCause() != null) {
        t = t.getCause();
      }
      System.out.println("error " + e.getClass().getSimpleName() + ": " + e.getMessage() + " | " + t.getMessage());
    }
  }
}
