// Hive 4's own metastore client with a delegation token, as a Kerberized job's tasks use it: a
// client logged in with Kerberos gets and renews a token; a user with no Kerberos credentials but
// that token in its UGI (token signature "hms") connects over SASL DIGEST-MD5; after the token is
// cancelled it cannot.
//
// usage: java -Djava.security.krb5.conf=F -cp <hive4 classpath>:<dir> TokenClient <uri> <service principal>
//            <existing table in default> <principal> <keytab>
// Prints one line per step: "renewed <expiry>", "token-owner <table owner>", "token-get <error>",
// "cancelled", "after-cancel <error>" (or "error <step>: ...").
import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import org.apache.hadoop.hive.metastore.conf.MetastoreConf;
import org.apache.hadoop.hive.metastore.utils.SecurityUtils;
import org.apache.hadoop.security.UserGroupInformation;

public class TokenClient {
  static Configuration conf(String uri, String principal) {
    Configuration conf = MetastoreConf.newMetastoreConf();
    conf.set("hadoop.security.authentication", "kerberos");
    MetastoreConf.setVar(conf, MetastoreConf.ConfVars.THRIFT_URIS, uri);
    MetastoreConf.setLongVar(conf, MetastoreConf.ConfVars.THRIFT_CONNECTION_RETRIES, 1);
    MetastoreConf.setBoolVar(conf, MetastoreConf.ConfVars.USE_THRIFT_SASL, true);
    MetastoreConf.setVar(conf, MetastoreConf.ConfVars.KERBEROS_PRINCIPAL, principal);
    return conf;
  }

  static String root(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return e.getClass().getSimpleName() + ": " + e.getMessage() + " | " + t.getMessage();
  }

  public static void main(String[] args) throws Exception {
    Configuration kconf = conf(args[0], args[1]);
    UserGroupInformation.setConfiguration(kconf);
    UserGroupInformation ugi = UserGroupInformation.loginUserFromKeytabAndReturnUGI(args[3], args[4]);
    String user = ugi.getShortUserName();
    String token = ugi.doAs((PrivilegedExceptionAction<String>) () -> {
      IMetaStoreClient c = new HiveMetaStoreClient(kconf);
      try {
        String t = c.getDelegationToken(user, user);
        System.out.println("renewed " + c.renewDelegationToken(t));
        return t;
      } finally {
        c.close();
      }
    });
    Configuration tconf = conf(args[0], args[1]);
    MetastoreConf.setVar(tconf, MetastoreConf.ConfVars.TOKEN_SIGNATURE, "hms");
    UserGroupInformation task = UserGroupInformation.createRemoteUser(user);
    SecurityUtils.setTokenStr(task, token, "hms");
    try {
      task.doAs((PrivilegedExceptionAction<Void>) () -> {
        IMetaStoreClient c = new HiveMetaStoreClient(tconf);
        try {
          System.out.println("token-owner " + c.getTable("default", args[2]).getOwner());
          try {
            c.getDelegationToken(user, user);
            System.out.println("token-get issued");
          } catch (Exception e) {
            System.out.println("token-get " + root(e));
          }
        } finally {
          c.close();
        }
        return null;
      });
    } catch (Exception e) {
      System.out.println("error token login: " + root(e));
    }
    ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
      IMetaStoreClient c = new HiveMetaStoreClient(kconf);
      try {
        c.cancelDelegationToken(token);
        System.out.println("cancelled");
      } finally {
        c.close();
      }
      return null;
    });
    try {
      task.doAs((PrivilegedExceptionAction<Void>) () -> {
        IMetaStoreClient c = new HiveMetaStoreClient(tconf);
        System.out.println("after-cancel connected " + c.getTable("default", args[2]).getOwner());
        c.close();
        return null;
      });
    } catch (Exception e) {
      System.out.println("after-cancel " + root(e));
    }
  }
}
