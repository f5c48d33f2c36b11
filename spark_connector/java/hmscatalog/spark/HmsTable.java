package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.spark.sql.connector.catalog.CatalogV2Util;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A table as the service describes it: the Spark schema, identity partitioning, and a split-plan scan.
 * Partitioned Hive tables are {@link PartitionedHmsTable}s, whose partitions Spark can also manage.
 */
class HmsTable implements SupportsRead, SupportsWrite {
    private final String sparkCatalog;
    private final ServiceClient client;
    private final TableCache cache;
    private final String catalogPath;
    private final JsonNode view;
    private final StructType schema;
    private final StructType dataSchema;
    private final StructType partitionSchema;
    private final Set<String> partitionKeys;  // lower-cased

    HmsTable(String sparkCatalog, ServiceClient client, TableCache cache, String catalogPath, JsonNode view) {
        this.sparkCatalog = sparkCatalog;
        this.client = client;
        this.cache = cache;
        this.catalogPath = catalogPath;
        this.view = view;
        JsonNode sparkSchema = view.path("spark_schema");
        if (sparkSchema.isMissingNode() || sparkSchema.isNull()) {
            throw new UnsupportedOperationException("table " + fullName() + " cannot be read: it is "
                    + view.path("format").asText("UNKNOWN") + " (" + view.path("reason").asText("no reason given") + ")");
        }
        this.schema = (StructType) DataType.fromJson(sparkSchema.toString());
        Set<String> keys = new LinkedHashSet<>();
        for (JsonNode key : view.path("partition_keys")) {
            keys.add(key.asText().toLowerCase(Locale.ROOT));
        }
        List<StructField> data = new ArrayList<>();
        List<StructField> partitions = new ArrayList<>();
        for (StructField field : schema.fields()) {
            (keys.contains(field.name().toLowerCase(Locale.ROOT)) ? partitions : data).add(field);
        }
        // partition columns in the metastore's key order, which the plan's partition values follow
        List<StructField> ordered = new ArrayList<>();
        for (String key : keys) {
            for (StructField field : partitions) {
                if (field.name().equalsIgnoreCase(key)) {
                    ordered.add(field);
                }
            }
        }
        this.dataSchema = new StructType(data.toArray(new StructField[0]));
        this.partitionSchema = new StructType(ordered.toArray(new StructField[0]));
        this.partitionKeys = keys;
    }

    /** Whether {@code column} is one of the table's partition keys (names compare without case). */
    boolean isPartitionKey(String column) {
        return partitionKeys.contains(column.toLowerCase(Locale.ROOT));
    }

    String fullName() {
        return sparkCatalog + "." + view.path("database").asText() + "." + view.path("name").asText();
    }

    @Override
    public String name() {
        return fullName();
    }

    @Override
    public Column[] columns() {
        return CatalogV2Util.structTypeToV2Columns(schema, false);
    }

    @Override
    public Transform[] partitioning() {
        Transform[] transforms = new Transform[partitionSchema.fields().length];
        for (int i = 0; i < transforms.length; i++) {
            transforms[i] = Expressions.identity(partitionSchema.fields()[i].name());
        }
        return transforms;
    }

    /**
     * The table's properties as Spark's own catalog gives them for the same table (SHOW TBLPROPERTIES, SHOW CREATE
     * TABLE, UNSET's check): the metastore's table parameters less what Spark's Hive support keeps apart (its schema
     * record, statistics, {@code EXTERNAL}, and for a data source table the metastore's DDL time); its storage's
     * properties as {@code option.*} (a data source table's OPTIONS, a Hive table's serde properties); the provider of
     * a data source or Iceberg table, so SHOW CREATE TABLE writes its USING; and whether its location is the managed
     * one, so SHOW CREATE TABLE leaves it out and a copy made from the statement gets a folder of its own. The
     * catalog's own bookkeeping (format, version) is not among them: it is no property of the table.
     */
    @Override
    public Map<String, String> properties() {
        Map<String, String> properties = new HashMap<>();
        if (view.hasNonNull("location")) {
            properties.put(TableCatalog.PROP_LOCATION, view.path("location").asText());
        }
        String provider = isIceberg() ? "iceberg" : view.path("spark_provider").asText("");
        if (!provider.isEmpty()) {
            properties.put(TableCatalog.PROP_PROVIDER, provider);
        }
        JsonNode parameters = view.path("storage").path("table_parameters");
        boolean external = parameters.path("EXTERNAL").asText("").equalsIgnoreCase("TRUE");
        properties.put(TableCatalog.PROP_IS_MANAGED_LOCATION, Boolean.toString(!external));
        parameters.properties().forEach(parameter -> {
            String key = parameter.getKey();
            boolean kept = !key.startsWith("spark.sql.") && !SPARK_KEEPS_APART.contains(key)
                    && !(key.equals("transient_lastDdlTime") && !provider.isEmpty());
            if (kept) {
                properties.putIfAbsent(key, parameter.getValue().asText());
            }
        });
        // the storage's properties as Spark's own tables give them: a data source table's OPTIONS, a Hive table's serde's
        if (!isIceberg()) {
            view.path("storage").path("serde_parameters").properties().forEach(parameter -> {
                String key = parameter.getKey();
                if (!key.equals("path") && !(key.equals("serialization.format") && !provider.isEmpty())) {
                    properties.putIfAbsent(TableCatalog.OPTION_PREFIX + key, parameter.getValue().asText());
                }
            });
        }
        return properties;
    }

    /** Table parameters Spark's Hive support reads into fields of its own (statistics, external), never as properties. */
    private static final Set<String> SPARK_KEEPS_APART = Set.of("EXTERNAL", "numFiles", "numPartitions", "numRows",
            "rawDataSize", "totalSize", "COLUMN_STATS_ACCURATE", "numFilesErasureCoded");

    @Override
    public Set<TableCapability> capabilities() {
        return CAPABILITIES;
    }

    /**
     * Batch reads and writes (append, overwrite by a static partition spec, dynamic overwrite, truncate: the
     * service commits them, see {@link HmsBatchWrite}), and where the running Spark has it (4.3), scan merging: Spark may then merge scalar
     * subqueries that scan this table with the same filters into one scan of the columns they read together
     * (TPC-DS q9 reads store_sales 5 times instead of 15), by building a scan of the union of columns.
     */
    private static final Set<TableCapability> CAPABILITIES = capabilities("BATCH_READ", "BATCH_WRITE", "TRUNCATE",
            "OVERWRITE_BY_FILTER", "OVERWRITE_DYNAMIC", "SCAN_MERGING");

    private static Set<TableCapability> capabilities(String... names) {
        Set<TableCapability> found = EnumSet.noneOf(TableCapability.class);
        for (String name : names) {
            try {
                found.add(TableCapability.valueOf(name));
            } catch (IllegalArgumentException e) {
                // a Spark release without it
            }
        }
        return found;
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        return new HmsScanBuilder(this, options);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        String[] keys = new String[partitionSchema.fields().length];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = partitionSchema.fields()[i].name();
        }
        WriteDestination destination = new WriteDestination(client, catalogPath, tablePath() + "/writes", null, fullName(), keys,
                schema, this::invalidate, job -> storage());
        return new HmsWriteBuilder(destination, info, null);
    }

    boolean isIceberg() {
        return view.path("format").asText("").equalsIgnoreCase("ICEBERG");
    }

    JsonNode view() {
        return view;
    }

    ServiceClient client() {
        return client;
    }

    /** The storage settings for this table's readers and writers (see {@link StorageSettings}): a role's session
     * scoped to this table's location, where the catalog has one. */
    StorageSettings storage() {
        return cache.storage(view.path("database").asText(), view.path("name").asText());
    }

    /** The service's split plan for {@code request}, kept by the catalog's cache until the table changes. */
    JsonNode plan(ObjectNode request) {
        return cache.plan(view.path("database").asText(), view.path("name").asText(), planPath(), request);
    }

    String planPath() {
        return tablePath() + "/plan";
    }

    /** The table's resource in the service's API. */
    String tablePath() {
        return catalogPath + "/databases/" + ServiceClient.segment(view.path("database").asText())
                + "/tables/" + ServiceClient.segment(view.path("name").asText());
    }

    /** Drops the driver's view and plans of this table (after a change made here). */
    void invalidate() {
        cache.invalidate(view.path("database").asText(), view.path("name").asText());
    }

    StructType dataSchema() {
        return dataSchema;
    }

    StructType partitionSchema() {
        return partitionSchema;
    }
}
