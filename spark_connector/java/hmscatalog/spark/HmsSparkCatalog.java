package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

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
 */
public class HmsSparkCatalog implements TableCatalog, SupportsNamespaces {
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
        for (String[] known : listNamespaces()) {
            if (known[0].equalsIgnoreCase(namespace[0])) {
                return true;
            }
        }
        return false;
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
    public void createNamespace(String[] namespace, Map<String, String> metadata) {
        throw readOnly("CREATE NAMESPACE");
    }

    @Override
    public void alterNamespace(String[] namespace, NamespaceChange... changes) {
        throw readOnly("ALTER NAMESPACE");
    }

    @Override
    public boolean dropNamespace(String[] namespace, boolean cascade) {
        throw readOnly("DROP NAMESPACE");
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
        return new HmsTable(name, client, cache, catalogPath(), view);
    }

    @Override
    public void invalidateTable(Identifier ident) {
        if (ident.namespace().length == 1) {
            cache.invalidate(ident.namespace()[0], ident.name());
        }
    }

    @Override
    public Table alterTable(Identifier ident, TableChange... changes) {
        throw readOnly("ALTER TABLE");
    }

    @Override
    public boolean dropTable(Identifier ident) {
        throw readOnly("DROP TABLE");
    }

    @Override
    public void renameTable(Identifier oldIdent, Identifier newIdent) {
        throw readOnly("ALTER TABLE ... RENAME");
    }

    private UnsupportedOperationException readOnly(String what) {
        return new UnsupportedOperationException(
                what + " is not supported in catalog " + name + ": hms-catalog's Spark catalogs are read-only; "
                        + "change the metastore with its own tools (or Spark's Hive catalog) and the change is seen here");
    }
}
