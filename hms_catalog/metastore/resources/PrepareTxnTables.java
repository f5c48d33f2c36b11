import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

/**
 * Creates the transaction and lock tables that datanucleus.schema.autoCreateAll does not create.
 * Clients that take metastore locks (pyiceberg's HiveCatalog commits through lock()) need them.
 * Reads the connection settings from the hive-site.xml on HIVE_CONF_DIR.
 */
public class PrepareTxnTables {
  public static void main(String[] args) throws Exception {
    HiveConf conf = new HiveConf();
    TxnDbUtil.prepDb(conf);
  }
}
