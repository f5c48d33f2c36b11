package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import scala.Option;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One catalog of the catalog service, as a Spark catalog: databases are namespaces, tables load from the
 * service (its cached, classified view of the metastore) and read through split plans.
 *
 * Configured as {@code spark.sql.catalog.<name>=hmscatalog.spark.HmsSparkCatalog} with options
 * {@code uri}, {@code token} and {@code catalog} (the service's catalog name, default the Spark name);
 * missing options fall back to {@code spark.hmscatalog.uri} / {@code spark.hmscatalog.token}. Loaded tables
 * stay cached on the driver until the service's change feed says they changed, so a REFRESH or a
 * metastore event reaches every running driver.
 *
 * DDL (CREATE/ALTER/DROP of namespaces and tables, RENAME, and the partitions of partitioned tables)
 * goes to the service, which carries it out as a catalog event; the driver then drops its own view and
 * plans of what changed, so its next query sees the change. The service's refusals keep their message:
 * a missing or existing object becomes Spark's exception for it, a token without the right a
 * "permission denied" naming the token's limits.
 */
public class HmsSparkCatalog implements StagingTableCatalog, SupportsNamespaces {
    private String name;
    private String remoteName;
    private ServiceClient client;
    private TableCache cache;

    @Override
    public void initialize(String name, CaseInsensitiveStringMap options) {
        this.name = name;
        this.remoteName = options.getOrDefault("catalog", name);
        String uri = options.getOrDefault("uri", ConnectorConf.sparkConf(ConnectorConf.URI));
        String token = options.getOrDefault("token", ConnectorConf.sparkConf(ConnectorConf.TOKEN));
        this.client = new ServiceClient(uri, token);
        long ttlSeconds = Long.parseLong(options.getOrDefault("cache-ttl-seconds", "3600"));
        this.cache = new TableCache(client, remoteName, ttlSeconds * 1000L,
                Boolean.parseBoolean(options.getOrDefault("follow-changes", "true")));
    }

    @Override
    public String name() {
        return name;
    }

    String catalogPath() {
        return "/v1/catalogs/" + ServiceClient.segment(remoteName);
    }

    // Namespaces ---------------------------------------------------------------------------------------

    @Override
    public String[][] listNamespaces() {
        JsonNode answer = client.get(catalogPath() + "/databases");
        List<String[]> names = new ArrayList<>();
        for (JsonNode database : answer.path("databases")) {
            names.add(new String[] {database.asText()});
        }
        return names.toArray(new String[0][]);
    }

    @Override
    public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
        if (namespace.length == 0) {
            return listNamespaces();
        }
        if (!namespaceExists(namespace)) {
            throw new NoSuchNamespaceException(namespace);
        }
        return new String[0][];
    }

    @Override
    public boolean namespaceExists(String[] namespace) {
        if (namespace.length != 1) {
            return false;
        }
        // Asked of the database itself, not of the cached list of names: a database made a moment ago
        // (by Spark's own DDL, another client) exists for a CTAS into it at once.
        try {
            client.get(databasePath(namespace[0]));
            return true;
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 404) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public Map<String, String> loadNamespaceMetadata(String[] namespace) throws NoSuchNamespaceException {
        if (!namespaceExists(namespace)) {
            throw new NoSuchNamespaceException(namespace);
        }
        Map<String, String> metadata = new HashMap<>();
        metadata.put("hms-catalog.catalog", remoteName);
        return metadata;
    }

    @Override
    public void createNamespace(String[] namespace, Map<String, String> metadata) throws NamespaceAlreadyExistsException {
        String database = database(namespace);
        try {
            client.post(catalogPath() + "/databases", DdlBodies.database(database, metadata));
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 409) {
                throw new NamespaceAlreadyExistsException(namespace);
            }
            throw e;
        }
    }

    @Override
    public void alterNamespace(String[] namespace, NamespaceChange... changes) throws NoSuchNamespaceException {
        String database = database(namespace);
        try {
            client.patch(databasePath(database), DdlBodies.databaseProperties(database, changes));
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 404) {
                throw new NoSuchNamespaceException(namespace);
            }
            throw e;
        }
    }

    @Override
    public boolean dropNamespace(String[] namespace, boolean cascade) throws NoSuchNamespaceException, NonEmptyNamespaceException {
        String database = database(namespace);
        try {
            client.delete(databasePath(database) + "?cascade=" + cascade + "&if_exists=false");
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 404) {
                throw new NoSuchNamespaceException(namespace);
            }
            if (e.status == 400 && e.getMessage().contains("not empty")) {  // RESTRICT: the service names the tables
                throw new NonEmptyNamespaceException(namespace, e.getMessage(), Option.empty());
            }
            throw e;
        } finally {
            cache.invalidateDatabase(database);
        }
        return true;
    }

    // Tables -------------------------------------------------------------------------------------------

    @Override
    public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
        if (namespace.length != 1) {
            throw new NoSuchNamespaceException(namespace);
        }
        JsonNode answer;
        try {
            answer = client.get(catalogPath() + "/databases/" + ServiceClient.segment(namespace[0]) + "/tables");
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 404) {
                throw new NoSuchNamespaceException(namespace);
            }
            throw e;
        }
        List<Identifier> tables = new ArrayList<>();
        for (JsonNode table : answer.path("tables")) {
            tables.add(Identifier.of(namespace, table.asText()));
        }
        return tables.toArray(new Identifier[0]);
    }

    @Override
    public Table loadTable(Identifier ident) throws NoSuchTableException {
        if (ident.namespace().length != 1) {
            throw new NoSuchTableException(ident);
        }
        JsonNode view;
        try {
            view = cache.view(ident.namespace()[0], ident.name());
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 404) {
                throw new NoSuchTableException(ident);
            }
            throw e;
        }
        boolean partitioned = !view.path("partition_keys").isEmpty();
        boolean iceberg = view.path("format").asText("").equalsIgnoreCase("ICEBERG");
        return partitioned && !iceberg ? new PartitionedHmsTable(name, client, cache, catalogPath(), view)
                : new HmsTable(name, client, cache, catalogPath(), view);
    }

    @Override
    public void invalidateTable(Identifier ident) {
        if (ident.namespace().length == 1) {
            cache.invalidate(ident.namespace()[0], ident.name());
        }
    }

    /** Whether the service has the table, readable here or not (DROP TABLE asks this before dropping). */
    @Override
    public boolean tableExists(Identifier ident) {
        if (ident.namespace().length != 1) {
            return false;
        }
        try {
            cache.view(ident.namespace()[0], ident.name());
            return true;
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 404) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public Table createTable(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
            throws TableAlreadyExistsException, NoSuchNamespaceException {
        String database = database(ident.namespace());
        ObjectNode body = DdlBodies.table(ident.name(), columns, partitions, properties, defaultProvider());
        try {
            client.post(databasePath(database) + "/tables", body);
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 409) {
                throw new TableAlreadyExistsException(ident);
            }
            if (e.status == 404 && !"table".equals(e.kind)) {
                throw new NoSuchNamespaceException(ident.namespace());
            }
            throw e;
        } finally {
            cache.invalidate(database, ident.name());
        }
        try {
            return loadTable(ident);
        } catch (NoSuchTableException e) {
            throw new IllegalStateException("table " + ident + " was created but the catalog service does not show it", e);
        }
    }

    // CREATE [OR REPLACE] TABLE .. AS SELECT --------------------------------------------------------------

    @Override
    public StagedTable stageCreate(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
            throws TableAlreadyExistsException, NoSuchNamespaceException {
        if (tableExists(ident)) {
            throw new TableAlreadyExistsException(ident);
        }
        return staged(ident, columns, partitions, properties, false);
    }

    @Override
    public StagedTable stageReplace(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
            throws NoSuchNamespaceException, NoSuchTableException {
        if (!tableExists(ident)) {
            throw new NoSuchTableException(ident);
        }
        return staged(ident, columns, partitions, properties, true);
    }

    @Override
    public StagedTable stageCreateOrReplace(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
            throws NoSuchNamespaceException {
        return staged(ident, columns, partitions, properties, true);
    }

    /** A table whose creation (or replacement) waits for its query: see {@link StagedHmsTable}. */
    private StagedTable staged(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties,
                               boolean replace) throws NoSuchNamespaceException {
        String database = database(ident.namespace());
        if (!namespaceExists(ident.namespace())) {
            throw new NoSuchNamespaceException(ident.namespace());
        }
        ObjectNode body = ServiceClient.JSON.createObjectNode().put("replace", replace);
        body.set("table", DdlBodies.table(ident.name(), columns, partitions, properties, defaultProvider()));
        WriteDestination destination = new WriteDestination(client, catalogPath(), databasePath(database) + "/writes", body,
                name + "." + database + "." + ident.name(), StagedHmsTable.partitionColumns(partitions), null,
                () -> cache.invalidate(database, ident.name()), cache::jobStorage);
        return new StagedHmsTable(destination.name(), columns, partitions, properties, destination);
    }

    @Override
    public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
        HmsTable table = (HmsTable) loadTable(ident);
        change(ident, DdlBodies.tableChanges(table.fullName(), table.view(), changes));
        return loadTable(ident);
    }

    @Override
    public boolean dropTable(Identifier ident) {
        return drop(ident, false);
    }

    @Override
    public boolean purgeTable(Identifier ident) {
        return drop(ident, true);
    }

    private boolean drop(Identifier ident, boolean purge) {
        if (ident.namespace().length != 1) {
            return false;
        }
        try {
            client.delete(tablePath(ident.namespace()[0], ident.name()) + "?purge=" + purge + "&if_exists=false");
            return true;
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 404) {
                return false;
            }
            throw e;
        } finally {
            cache.invalidate(ident.namespace()[0], ident.name());
        }
    }

    /**
     * Within this catalog only. The new name's namespace is its database ({@code RENAME TO t2} keeps the
     * database, {@code db2.t2} moves it there), or {@code <this catalog>.db2}.
     */
    @Override
    public void renameTable(Identifier oldIdent, Identifier newIdent) throws NoSuchTableException, TableAlreadyExistsException {
        String[] target = newIdent.namespace();
        if (target.length == 2 && target[0].equalsIgnoreCase(name)) {
            target = new String[] {target[1]};
        }
        if (target.length > 1) {
            throw new UnsupportedOperationException("cannot rename " + name + "." + oldIdent + " to " + newIdent
                    + ": a table is renamed within its catalog (RENAME TO t2, db.t2 or " + name + ".db.t2)");
        }
        ObjectNode rename = ServiceClient.JSON.createObjectNode().put("op", "rename").put("name", newIdent.name());
        if (target.length == 1) {
            rename.put("database", target[0]);
        }
        ObjectNode body = ServiceClient.JSON.createObjectNode();
        body.putArray("changes").add(rename);
        try {
            change(oldIdent, body);
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 409) {
                throw new TableAlreadyExistsException(Identifier.of(target.length == 1 ? target : oldIdent.namespace(), newIdent.name()));
            }
            throw e;
        } finally {
            cache.invalidate(target.length == 1 ? target[0] : oldIdent.namespace()[0], newIdent.name());
        }
    }

    /** PATCHes the table with {@code body}'s changes; the driver's view and plans of it are dropped whatever happens. */
    private void change(Identifier ident, ObjectNode body) throws NoSuchTableException {
        String database = database(ident.namespace());
        try {
            client.patch(tablePath(database, ident.name()), body);
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 404 && !"column".equals(e.kind) && !"partition".equals(e.kind)) {
                throw new NoSuchTableException(ident);
            }
            throw e;
        } finally {
            cache.invalidate(database, ident.name());
        }
    }

    String databasePath(String database) {
        return catalogPath() + "/databases/" + ServiceClient.segment(database);
    }

    String tablePath(String database, String table) {
        return databasePath(database) + "/tables/" + ServiceClient.segment(table);
    }

    /** A namespace of this catalog is one database. */
    private String database(String[] namespace) {
        if (namespace.length != 1) {
            throw new IllegalArgumentException("catalog " + name + " has databases as namespaces (" + name
                    + ".db), not '" + String.join(".", namespace) + "'");
        }
        return namespace[0];
    }

    /**
     * The provider of a CREATE TABLE given neither USING nor STORED AS: Spark's own rule
     * ({@code spark.sql.legacy.createHiveTableByDefault}: a Hive table, else {@code spark.sql.sources.default}).
     */
    private static String defaultProvider() {
        SQLConf conf = SQLConf.get();
        if (Boolean.parseBoolean(conf.getConfString("spark.sql.legacy.createHiveTableByDefault", "false"))) {
            return null;
        }
        return conf.defaultDataSourceName();
    }
}
