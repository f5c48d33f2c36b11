import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.logging.Logger;

import javax.jdo.PersistenceManager;
import javax.xml.parsers.DocumentBuilderFactory;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.ObjectStore;
import org.apache.hadoop.hive.metastore.model.MTable;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;
import org.datanucleus.api.jdo.JDOPersistenceManagerFactory;
import org.datanucleus.store.schema.SchemaAwareStoreManager;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Makes the Derby database hold what a production Hive 2.3 metastore's holds, before the server starts.
 *
 * <p>datanucleus.schema.autoCreateAll derives column types from package.jdo, not from Hive's schema
 * scripts, and creates each table only when the server first touches its class. On Derby that makes
 * the notification log's MESSAGE a LONG VARCHAR (at most 32,700 characters) and table, serde and
 * storage-descriptor parameter values and column types VARCHAR(32672), where Hive's own
 * hive-schema-2.3.0.derby.sql declares all five CLOB (HIVE-12274). So one ADD_PARTITION event for a
 * hundred deep partitions, a Spark schema or Avro literal kept in a table parameter, or a struct type
 * of 40,000 characters fails the whole call on the embedded metastore and succeeds on a production one.
 * Comparing every column autoCreateAll makes with that script found a few narrower VARCHARs as well
 * (column comments 256 instead of 4000, decimal statistics 255 instead of 4000, ...): {@link #WIDER}.
 *
 * <p>So the preparer first has DataNucleus create every table of package.jdo, with the server's own
 * ObjectStore settings (the server's autoCreateAll then finds them and leaves them alone), and then
 * gives those columns their production types. Derby cannot change a column to CLOB in place, so that
 * is done as Hive's upgrade script 039-HIVE-12274.derby.sql does it: add a CLOB column, copy, drop the
 * old one, rename; a VARCHAR is lengthened in place. The same steps bring a database made by an older
 * version up to date, keeping its content, and every step looks first, so a second run changes nothing.
 *
 * <p>Also creates the transaction and lock tables, which autoCreateAll does not (clients that take
 * metastore locks, such as pyiceberg's HiveCatalog commits, need them). Reads the connection settings
 * from the hive-site.xml on HIVE_CONF_DIR. Not covered: SEQUENCE_TABLE, which DataNucleus creates on
 * first insert with a VARCHAR(255) name (256 in the script) and which holds only its own class names.
 *
 * <p>On PostgreSQL the same steps make what Hive's hive-schema-2.3.0.postgres.sql makes, which is not
 * shipped with pyspark's jars: DataNucleus creates quoted upper-case tables ("TBLS", "PARTITIONS"), the
 * names MetaStoreDirectSql's hand-written SQL uses; the CLOB columns become text (an ALTER in place);
 * the transaction tables are TxnDbUtil's own, with its one Derby-only type (VARCHAR FOR BIT DATA) given
 * PostgreSQL's bytea; and one index the script lacks, on partition key values ({@link #indexKeyValues}).
 * The database is not the metastore directory's, so no file there can tell whether
 * it was prepared: with {@code --serve} the preparer runs in the server's own JVM at every start (on a
 * prepared database it only looks) and then starts HiveMetaStore with the remaining arguments.
 */
public class PrepareDatabase {
  /** Columns hive-schema-2.3.0.derby.sql declares CLOB. */
  private static final String[][] CLOBS = {
    {"NOTIFICATION_LOG", "MESSAGE"},
    {"TABLE_PARAMS", "PARAM_VALUE"},
    {"SERDE_PARAMS", "PARAM_VALUE"},
    {"SD_PARAMS", "PARAM_VALUE"},
    {"COLUMNS_V2", "TYPE_NAME"},
  };

  /** The index {@link #indexKeyValues} makes on PostgreSQL. */
  static final String KEY_VALUES_INDEX = "PARTITION_KEY_VALS_BY_VALUE";

  /** VARCHAR columns the production script declares wider than package.jdo does. */
  private static final Width[] WIDER = {
    new Width("COLUMNS_V2", "COMMENT", 4000),
    new Width("TAB_COL_STATS", "BIG_DECIMAL_LOW_VALUE", 4000),
    new Width("TAB_COL_STATS", "BIG_DECIMAL_HIGH_VALUE", 4000),
    new Width("PART_COL_STATS", "BIG_DECIMAL_LOW_VALUE", 4000),
    new Width("PART_COL_STATS", "BIG_DECIMAL_HIGH_VALUE", 4000),
    new Width("KEY_CONSTRAINTS", "CONSTRAINT_NAME", 400),
    new Width("PARTITION_KEY_VALS", "PART_KEY_VAL", 256),
    new Width("BUCKETING_COLS", "BUCKET_COL_NAME", 256),
    new Width("SKEWED_COL_NAMES", "SKEWED_COL_NAME", 256),
    new Width("SKEWED_STRING_LIST_VALUES", "STRING_LIST_VALUE", 256),
  };

  private static final class Width {
    final String table;
    final String column;
    final int characters;

    Width(String table, String column, int characters) {
      this.table = table;
      this.column = column;
      this.characters = characters;
    }
  }

  public static void main(String[] args) throws Throwable {
    prepare(new HiveConf());
    if (args.length > 0 && "--serve".equals(args[0])) {
      HiveMetaStore.main(Arrays.copyOfRange(args, 1, args.length));
    }
  }

  private static void prepare(HiveConf conf) throws Exception {
    createMetastoreTables(conf);
    String url = conf.getVar(HiveConf.ConfVars.METASTORECONNECTURLKEY);
    String user = conf.getVar(HiveConf.ConfVars.METASTORE_CONNECTION_USER_NAME);
    String password = conf.get(HiveConf.ConfVars.METASTOREPWD.varname);
    boolean derby = url.startsWith("jdbc:derby:");
    try (Connection connection = derby ? DriverManager.getConnection(url) : DriverManager.getConnection(url, user, password)) {
      DatabaseMetaData meta = connection.getMetaData();
      String schema = connection.getSchema();
      for (String[] column : CLOBS) {
        String type = columnType(meta, schema, column[0], column[1]);
        if (type == null) {
          throw new IllegalStateException("DataNucleus did not create " + column[0] + "." + column[1]);
        }
        if (derby && !"CLOB".equals(type)) {
          toClob(connection, schema, column[0], column[1]);
        } else if (!derby && !"text".equals(type)) {
          alter(connection, column[0], column[1], "text");
        }
      }
      for (Width column : WIDER) {
        widen(connection, schema, column, derby);
      }
      if (!derby) {
        indexKeyValues(connection);
      }
      // TxnDbUtil's statements name their tables unquoted: Derby keeps such names upper-case, PostgreSQL lower.
      if (!tableExists(meta, schema, derby ? "TXNS" : "txns")) {
        if (derby) {
          TxnDbUtil.prepDb(conf);  // not idempotent: it fails on tables it made before
        } else {
          HiveConf through = new HiveConf(conf);
          through.setVar(HiveConf.ConfVars.METASTORE_CONNECTION_DRIVER, PostgresTypes.class.getName());
          TxnDbUtil.prepDb(through);
        }
      }
    }
  }

  /**
   * Every table and constraint of package.jdo, as the server's own ObjectStore would create them
   * (tables that exist are left as they are), so that the columns below exist to be changed.
   */
  private static void createMetastoreTables(HiveConf conf) throws Exception {
    ObjectStore store = new ObjectStore();
    store.setConf(conf);
    PersistenceManager pm = store.getPersistenceManager();
    JDOPersistenceManagerFactory factory = (JDOPersistenceManagerFactory) pm.getPersistenceManagerFactory();
    SchemaAwareStoreManager schema = (SchemaAwareStoreManager) factory.getNucleusContext().getStoreManager();
    schema.createSchemaForClasses(modelClasses(), new Properties());
    pm.close();
    store.shutdown();
  }

  /** The persistent classes package.jdo maps to tables (embedded-only ones live inside others). */
  private static Set<String> modelClasses() throws Exception {
    URL jar = MTable.class.getProtectionDomain().getCodeSource().getLocation();
    DocumentBuilderFactory parsers = DocumentBuilderFactory.newInstance();
    parsers.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
    Set<String> classes = new TreeSet<>();
    try (InputStream in = new URL("jar:" + jar + "!/package.jdo").openStream()) {
      NodeList packages = parsers.newDocumentBuilder().parse(in).getElementsByTagName("package");
      for (int p = 0; p < packages.getLength(); p++) {
        Element pkg = (Element) packages.item(p);
        NodeList found = pkg.getElementsByTagName("class");
        for (int c = 0; c < found.getLength(); c++) {
          Element cls = (Element) found.item(c);
          if (!"true".equals(cls.getAttribute("embedded-only"))) {
            classes.add(pkg.getAttribute("name") + "." + cls.getAttribute("name"));
          }
        }
      }
    }
    return classes;
  }

  /**
   * Derby has no ALTER COLUMN to CLOB: add, copy, drop, rename, in one transaction so that a failure
   * leaves the old column in place. RESTRICT: fail rather than drop anything that depends on it.
   */
  private static void toClob(Connection connection, String schema, String table, String column) throws Exception {
    String target = "\"" + schema + "\".\"" + table + "\"";
    String temporary = column + "_CLOB";
    connection.setAutoCommit(false);
    try (Statement statement = connection.createStatement()) {
      statement.execute("ALTER TABLE " + target + " ADD COLUMN \"" + temporary + "\" CLOB");
      statement.execute("UPDATE " + target + " SET \"" + temporary + "\" = CAST(\"" + column + "\" AS CLOB)");
      statement.execute("ALTER TABLE " + target + " DROP COLUMN \"" + column + "\" RESTRICT");
      statement.execute("RENAME COLUMN " + target + ".\"" + temporary + "\" TO \"" + column + "\"");
      connection.commit();
    } catch (Exception e) {
      connection.rollback();
      throw e;
    } finally {
      connection.setAutoCommit(true);
    }
  }

  /** Both lengthen a VARCHAR in place, each with its own words. */
  private static void widen(Connection connection, String schema, Width column, boolean derby) throws Exception {
    try (ResultSet found = connection.getMetaData().getColumns(null, schema, column.table, column.column)) {
      if (!found.next() || found.getInt("COLUMN_SIZE") >= column.characters) {
        return;
      }
    }
    String type = "VARCHAR(" + column.characters + ")";
    if (derby) {
      try (Statement statement = connection.createStatement()) {
        statement.execute("ALTER TABLE \"" + schema + "\".\"" + column.table + "\" ALTER COLUMN \"" + column.column
            + "\" SET DATA TYPE " + type);
      }
    } else {
      alter(connection, column.table, column.column, type);
    }
  }

  /**
   * An index on partition key values by key position, which neither package.jdo nor Hive's schema scripts
   * make. MetaStoreDirectSql joins PARTITION_KEY_VALS once per key a filter names, and without it the only way
   * in is the primary key (PART_ID, INTEGER_IDX): a filter on a table of a million partitions looks each one
   * up (0.9-1.0 s of PostgreSQL's time before the first partition is read). With it, a filter whose values
   * narrow the table (a range on one key and a bound on another) is answered from the matching values
   * alone: 0.06-0.10 s instead of 0.9-1.1 s on that table. String keys only: Hive casts integral and date
   * keys' values in its SQL, which no index on the text serves. Made once, looked for at every later start;
   * on a database that already holds partitions, the first start builds it (about 4 s for a million
   * partitions).
   */
  private static void indexKeyValues(Connection connection) throws Exception {
    // Looked for first: CREATE INDEX, even with IF NOT EXISTS, locks the table against writes and needs its owner
    // before it finds the index there, so a start would wait behind any open write and refuse a role that does not
    // own the table. IF NOT EXISTS still covers two starts racing.
    try (PreparedStatement look = connection.prepareStatement(
        "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?")) {
      look.setString(1, KEY_VALUES_INDEX);
      try (ResultSet found = look.executeQuery()) {
        if (found.next()) {
          return;
        }
      }
    }
    try (Statement statement = connection.createStatement()) {
      statement.execute("CREATE INDEX IF NOT EXISTS \"" + KEY_VALUES_INDEX + "\" ON \"PARTITION_KEY_VALS\" "
          + "(\"INTEGER_IDX\", \"PART_KEY_VAL\")");
    }
  }

  /** PostgreSQL changes a column's type in place (VARCHAR to text or to a longer VARCHAR rewrites nothing). */
  private static void alter(Connection connection, String table, String column, String type) throws Exception {
    try (Statement statement = connection.createStatement()) {
      statement.execute("ALTER TABLE \"" + table + "\" ALTER COLUMN \"" + column + "\" TYPE " + type);
    }
  }

  private static boolean tableExists(DatabaseMetaData meta, String schema, String table) throws Exception {
    try (ResultSet tables = meta.getTables(null, schema, table, null)) {
      return tables.next();
    }
  }

  private static String columnType(DatabaseMetaData meta, String schema, String table, String column) throws Exception {
    try (ResultSet columns = meta.getColumns(null, schema, table, column)) {
      return columns.next() ? columns.getString("TYPE_NAME") : null;
    }
  }

  /**
   * The JDBC driver TxnDbUtil.prepDb connects through on PostgreSQL (it takes the driver's class name
   * from the configuration): PostgreSQL's own driver, with the statements' one Derby-only type, the
   * compactor's serialized state as VARCHAR(2048) FOR BIT DATA, written as PostgreSQL's bytea. Its closing
   * rollback is skipped in auto-commit, where PostgreSQL's driver refuses it (and TxnDbUtil logs an error).
   */
  public static final class PostgresTypes implements Driver {
    private static Driver delegate(String url) throws SQLException {
      return DriverManager.getDriver(url);
    }

    @Override
    public Connection connect(String url, Properties info) throws SQLException {
      Connection connection = delegate(url).connect(url, info);
      return connection == null ? null : (Connection) Proxy.newProxyInstance(
          PrepareDatabase.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, arguments) -> {
            if (method.getName().equals("rollback") && arguments == null && connection.getAutoCommit()) {
              return null;
            }
            Object result = invoke(connection, method, arguments);
            if (result instanceof Statement && method.getName().equals("createStatement")) {
              Statement statement = (Statement) result;
              return Proxy.newProxyInstance(PrepareDatabase.class.getClassLoader(), new Class<?>[] {Statement.class},
                  (inner, call, values) -> {
                    if (values != null && values.length == 1 && values[0] instanceof String) {
                      values = new Object[] {((String) values[0]).replaceAll("(?i)varchar\\(\\d+\\) for bit data", "bytea")};
                    }
                    return invoke(statement, call, values);
                  });
            }
            return result;
          });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] arguments) throws Throwable {
      try {
        return method.invoke(target, arguments);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }

    @Override
    public boolean acceptsURL(String url) throws SQLException {
      return url.startsWith("jdbc:postgresql:");
    }

    @Override
    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) throws SQLException {
      return delegate(url).getPropertyInfo(url, info);
    }

    @Override
    public int getMajorVersion() {
      return 1;
    }

    @Override
    public int getMinorVersion() {
      return 0;
    }

    @Override
    public boolean jdbcCompliant() {
      return false;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      throw new SQLFeatureNotSupportedException();
    }
  }
}
