import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

/**
 * Makes the Derby database hold what a production metastore's holds, before the server starts.
 *
 * datanucleus.schema.autoCreateAll derives column types from package.jdo, which gives the notification
 * log's MESSAGE a LONG VARCHAR (at most 32,700 characters on Derby). Hive's own Derby schema
 * (hive-schema-2.3.0.derby.sql) declares it CLOB: one ADD_PARTITION event for thousands of partitions
 * is megabytes of JSON, and with the short column the whole add_partitions call fails. So the table is
 * created here with the production definition (autoCreateAll leaves an existing table alone), and a
 * database made before this fix has its column converted in place, keeping its events.
 *
 * Also creates the transaction and lock tables that autoCreateAll does not create (clients that take
 * metastore locks, such as pyiceberg's HiveCatalog commits, need them). Reads the connection settings
 * from the hive-site.xml on HIVE_CONF_DIR; safe to run again on a prepared database.
 */
public class PrepareDatabase {
  private static final String NOTIFICATION_LOG =
      "CREATE TABLE \"APP\".\"NOTIFICATION_LOG\" (\"NL_ID\" BIGINT NOT NULL, \"DB_NAME\" VARCHAR(128),"
          + " \"EVENT_ID\" BIGINT NOT NULL, \"EVENT_TIME\" INTEGER NOT NULL, \"EVENT_TYPE\" VARCHAR(32) NOT NULL,"
          + " \"MESSAGE\" CLOB, \"TBL_NAME\" VARCHAR(256), \"MESSAGE_FORMAT\" VARCHAR(16),"
          + " CONSTRAINT \"NOTIFICATION_LOG_PK\" PRIMARY KEY (\"NL_ID\"))";

  public static void main(String[] args) throws Exception {
    HiveConf conf = new HiveConf();
    String url = conf.getVar(HiveConf.ConfVars.METASTORECONNECTURLKEY);
    try (Connection connection = DriverManager.getConnection(url)) {
      if (!tableExists(connection.getMetaData(), "TXNS")) {
        TxnDbUtil.prepDb(conf);  // not idempotent: it fails on tables it made before
      }
      String type = columnType(connection.getMetaData(), "NOTIFICATION_LOG", "MESSAGE");
      try (Statement statement = connection.createStatement()) {
        if (type == null) {
          statement.execute(NOTIFICATION_LOG);
        } else if (!"CLOB".equals(type)) {
          // Derby cannot change a column's type: add the CLOB, copy, drop the old one, rename.
          statement.execute("ALTER TABLE \"APP\".\"NOTIFICATION_LOG\" ADD COLUMN \"MESSAGE_CLOB\" CLOB");
          statement.execute("UPDATE \"APP\".\"NOTIFICATION_LOG\" SET \"MESSAGE_CLOB\" = CAST(\"MESSAGE\" AS CLOB)");
          statement.execute("ALTER TABLE \"APP\".\"NOTIFICATION_LOG\" DROP COLUMN \"MESSAGE\"");
          statement.execute("RENAME COLUMN \"APP\".\"NOTIFICATION_LOG\".\"MESSAGE_CLOB\" TO \"MESSAGE\"");
        }
      }
    }
  }

  private static boolean tableExists(DatabaseMetaData meta, String table) throws Exception {
    try (ResultSet tables = meta.getTables(null, "APP", table, null)) {
      return tables.next();
    }
  }

  private static String columnType(DatabaseMetaData meta, String table, String column) throws Exception {
    try (ResultSet columns = meta.getColumns(null, "APP", table, column)) {
      return columns.next() ? columns.getString("TYPE_NAME") : null;
    }
  }
}
