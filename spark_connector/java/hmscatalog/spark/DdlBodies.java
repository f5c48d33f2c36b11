package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.spark.sql.catalyst.util.CharVarcharUtils;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Metadata;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Spark's DDL arguments as the service's request bodies: namespaces as databases, {@code createTable}'s
 * columns, transforms and properties as a table, {@code alterTable}'s TableChanges as the service's changes.
 *
 * Only translation: which names, types and storage are valid, and what a change does to a table, is the
 * service's to decide (its errors name the object and the reason). Types go as Hive type strings: Spark's
 * {@code catalogString} is Hive's syntax ({@code array<struct<a:int>>}, {@code decimal(10,2)}), and a
 * char/varchar column Spark turned into a string keeps its declared type in the column's metadata.
 */
final class DdlBodies {
    /** Keys Spark sets on every table or namespace it creates, none of them a property of the table. */
    private static final Set<String> RESERVED = Set.of(TableCatalog.PROP_OWNER, TableCatalog.PROP_IS_MANAGED_LOCATION,
            TableCatalog.PROP_TABLE_TYPE, TableCatalog.PROP_COLLATION);
    /** {@code STORED AS} / {@code ROW FORMAT} on a catalog that is not Spark's own come as these keys. */
    private static final String STORED_AS = "hive.stored-as";
    private static final String SERDE = "hive.serde";
    private static final String INPUT_FORMAT = "hive.input-format";
    private static final String OUTPUT_FORMAT = "hive.output-format";

    private DdlBodies() {
    }

    // Namespaces ---------------------------------------------------------------------------------------

    static ObjectNode database(String name, Map<String, String> metadata) {
        ObjectNode body = ServiceClient.JSON.createObjectNode().put("name", name);
        ObjectNode properties = body.putObject("properties");
        for (Map.Entry<String, String> entry : metadata.entrySet()) {
            switch (entry.getKey()) {
                case SupportsNamespaces.PROP_COMMENT -> body.put("comment", entry.getValue());
                case SupportsNamespaces.PROP_LOCATION -> body.put("location", entry.getValue());
                default -> {
                    if (!RESERVED.contains(entry.getKey())) {
                        properties.put(entry.getKey(), entry.getValue());
                    }
                }
            }
        }
        return body;
    }

    /** ALTER NAMESPACE .. SET PROPERTIES; Hive keeps a database's properties, its comment and location. */
    static ObjectNode databaseProperties(String database, NamespaceChange[] changes) {
        ObjectNode body = ServiceClient.JSON.createObjectNode();
        ObjectNode properties = body.putObject("properties");
        for (NamespaceChange change : changes) {
            if (change instanceof NamespaceChange.SetProperty set) {
                if (set.property().equals(SupportsNamespaces.PROP_LOCATION) || set.property().equals(SupportsNamespaces.PROP_COMMENT)) {
                    throw new UnsupportedOperationException("cannot change the " + set.property() + " of database '" + database
                            + "': the metastore keeps a database's " + set.property() + " as it was created");
                }
                properties.put(set.property(), set.value());
            } else if (change instanceof NamespaceChange.RemoveProperty remove) {
                throw new UnsupportedOperationException("cannot remove property '" + remove.property() + "' of database '"
                        + database + "': the metastore keeps database properties once set (set it to another value instead)");
            } else {
                throw new UnsupportedOperationException("ALTER NAMESPACE " + database + ": " + change + " is not supported");
            }
        }
        return body;
    }

    // Tables -------------------------------------------------------------------------------------------

    /**
     * The table to create. {@code defaultProvider} is the provider of a table given neither USING nor
     * STORED AS / ROW FORMAT (null: a Hive table, as Spark makes one with Hive's defaults).
     *
     * USING parquet|orc|csv|json makes a Spark data source table partitioned by columns of its own;
     * STORED AS / ROW FORMAT (or USING hive) a Hive table, whose identity-partition columns become its
     * typed partition columns, after the data columns; USING iceberg an Iceberg table with Spark's
     * transforms as Iceberg's ({@code days(ts)}, {@code bucket(16, id)}).
     */
    static ObjectNode table(String name, Column[] columns, Transform[] partitions, Map<String, String> given,
                            String defaultProvider) {
        Map<String, String> properties = new LinkedHashMap<>(given);
        String provider = properties.remove(TableCatalog.PROP_PROVIDER);
        boolean hiveKeys = properties.keySet().stream().anyMatch(key -> key.startsWith("hive."));
        if (provider == null && !hiveKeys) {
            provider = defaultProvider;
        }
        boolean hive = provider == null || provider.equalsIgnoreCase("hive");
        if (!hive && hiveKeys) {
            throw new IllegalArgumentException("table " + name + ": USING " + provider + " cannot be combined with STORED AS "
                    + "or ROW FORMAT");
        }
        ObjectNode body = ServiceClient.JSON.createObjectNode().put("name", name);
        String comment = properties.remove(TableCatalog.PROP_COMMENT);
        String location = properties.remove(TableCatalog.PROP_LOCATION);
        boolean external = Boolean.parseBoolean(properties.remove(TableCatalog.PROP_EXTERNAL));
        properties.keySet().removeAll(RESERVED);
        // OPTIONS and SERDEPROPERTIES come prefixed with "option."; Spark also passes OPTIONS unprefixed
        Map<String, String> options = new LinkedHashMap<>();
        properties.entrySet().removeIf(entry -> {
            if (entry.getKey().startsWith(TableCatalog.OPTION_PREFIX)) {
                options.put(entry.getKey().substring(TableCatalog.OPTION_PREFIX.length()), entry.getValue());
                return true;
            }
            return false;
        });
        options.forEach((key, value) -> properties.remove(key, value));
        String storedAs = properties.remove(STORED_AS);
        String serde = properties.remove(SERDE);
        if (properties.containsKey(INPUT_FORMAT) || properties.containsKey(OUTPUT_FORMAT)) {
            throw new UnsupportedOperationException("table " + name + ": STORED AS INPUTFORMAT .. OUTPUTFORMAT .. is not "
                    + "supported through this catalog; use STORED AS PARQUET|ORC|TEXTFILE|AVRO|SEQUENCEFILE|RCFILE or ROW FORMAT");
        }

        List<String> partitionNames = new ArrayList<>();
        List<String> transforms = new ArrayList<>();
        for (Transform transform : partitions) {
            String column = identityColumn(transform);
            if (column != null) {
                partitionNames.add(column);
            }
            transforms.add(column != null ? column : transformText(transform));
        }
        boolean iceberg = !hive && provider.equalsIgnoreCase("iceberg");
        if (!iceberg && partitionNames.size() != partitions.length) {
            throw new UnsupportedOperationException("table " + name + ": " + (hive ? "Hive" : provider) + " tables are "
                    + "partitioned by columns only, not by " + String.join(", ", transforms) + " (transforms are for USING iceberg)");
        }
        ArrayNode data = body.putArray("columns");
        ArrayNode partitionColumns = ServiceClient.JSON.createArrayNode();
        for (Column column : columns) {
            if (column.defaultValue() != null || column.generationExpression() != null) {
                throw new UnsupportedOperationException("table " + name + ", column " + column.name()
                        + ": default values and generated columns are not supported");
            }
            boolean partitionKey = partitionNames.stream().anyMatch(column.name()::equalsIgnoreCase);
            (hive && partitionKey ? partitionColumns : data).add(column(column.name(), column.dataType(),
                    column.metadataInJSON(), column.comment()));
        }
        if (hive) {
            // in PARTITIONED BY's order, which is the partition keys' order
            ArrayNode ordered = body.putArray("partition_columns");
            for (String key : partitionNames) {
                for (JsonNode column : partitionColumns) {
                    if (column.path("name").asText().equalsIgnoreCase(key)) {
                        ordered.add(column);
                    }
                }
            }
            if (storedAs != null) {
                body.put("stored_as", storedAs);
            }
            if (serde != null || !options.isEmpty()) {
                ObjectNode rowFormat = body.putObject("row_format");
                if (serde != null) {
                    rowFormat.put("serde", serde);
                }
                ObjectNode serdeProperties = rowFormat.putObject("serde_properties");
                options.forEach(serdeProperties::put);
            }
        } else {
            body.put("provider", provider);  // as written (USING PARQUET), as Spark's own catalog keeps it
            ArrayNode transformed = body.putArray("partition_transforms");
            transforms.forEach(transformed::add);
            ObjectNode bodyOptions = body.putObject("options");
            options.forEach(bodyOptions::put);
        }
        if (comment != null) {
            body.put("comment", comment);
        }
        if (location != null) {
            body.put("location", location);
        }
        body.put("external", external);
        ObjectNode bodyProperties = body.putObject("properties");
        properties.forEach(bodyProperties::put);
        return body;
    }

    /**
     * A column as the service takes it; {@code metadataJson} is the Spark column's metadata (may be null). Spark's v2
     * column says {@code COMMENT ''} as an empty comment and no COMMENT as null: the empty one is sent, as Spark's own
     * catalog keeps it.
     */
    static ObjectNode column(String name, DataType type, String metadataJson, String comment) {
        ObjectNode column = ServiceClient.JSON.createObjectNode().put("name", name).put("type", hiveType(type, metadataJson));
        if (comment != null) {
            column.put("comment", comment);
        }
        return column;
    }

    static String hiveType(DataType type, String metadataJson) {
        if (metadataJson != null && !metadataJson.isEmpty()) {
            scala.Option<String> declared = CharVarcharUtils.getRawTypeString(Metadata.fromJson(metadataJson));
            if (declared.isDefined()) {
                return declared.get();
            }
        }
        return type.catalogString();
    }

    private static String identityColumn(Transform transform) {
        if (!transform.name().equalsIgnoreCase("identity") || transform.references().length != 1) {
            return null;
        }
        return fieldName(transform.references()[0]);
    }

    /** {@code bucket(16, id)}, {@code days(ts)}, {@code truncate(4, name)}: widths first, as Iceberg writes them. */
    static String transformText(Transform transform) {
        List<String> literals = new ArrayList<>();
        List<String> columns = new ArrayList<>();
        for (Expression argument : transform.arguments()) {
            if (argument instanceof NamedReference reference) {
                columns.add(fieldName(reference));
            } else if (argument instanceof Literal<?> literal) {
                literals.add(String.valueOf(literal.value()));
            } else {
                throw new UnsupportedOperationException("partition transform " + transform.describe() + " is not supported");
            }
        }
        literals.addAll(columns);
        return transform.name() + "(" + String.join(", ", literals) + ")";
    }

    private static String fieldName(NamedReference reference) {
        if (reference.fieldNames().length != 1) {
            throw new UnsupportedOperationException("partitioning by a nested field (" + reference.describe()
                    + ") is not supported");
        }
        return reference.fieldNames()[0];
    }

    // Changes ------------------------------------------------------------------------------------------

    /**
     * {@code alterTable}'s changes, in order, as the service's. Spark says DROP COLUMNS and REPLACE COLUMNS
     * as column deletions (and additions); the service replaces the columns, so those become one
     * {@code replace_columns} with the table's data columns ({@code view}'s) after Spark's changes.
     */
    static ObjectNode tableChanges(String table, JsonNode view, TableChange[] changes) {
        ObjectNode body = ServiceClient.JSON.createObjectNode();
        ArrayNode out = body.putArray("changes");
        boolean deletes = false;
        for (TableChange change : changes) {
            deletes |= change instanceof TableChange.DeleteColumn;
        }
        if (deletes) {
            out.add(replaceColumns(table, view, changes));
            for (TableChange change : changes) {
                if (!(change instanceof TableChange.ColumnChange)) {
                    addChange(table, out, change);
                }
            }
        } else {
            for (TableChange change : changes) {
                addChange(table, out, change);
            }
        }
        return body;
    }

    private static void addChange(String table, ArrayNode out, TableChange change) {
        JsonNode last = out.isEmpty() ? null : out.get(out.size() - 1);
        if (change instanceof TableChange.AddColumn add) {
            checkAdd(table, add);
            ObjectNode column = column(topLevel(table, add.fieldNames()), add.dataType(), null, add.comment());
            if (last != null && last.path("op").asText().equals("add_columns")) {
                ((ArrayNode) last.path("columns")).add(column);
            } else {
                out.addObject().put("op", "add_columns").putArray("columns").add(column);
            }
        } else if (change instanceof TableChange.RenameColumn rename) {
            out.addObject().put("op", "rename_column").put("old", topLevel(table, rename.fieldNames())).put("new", rename.newName());
        } else if (change instanceof TableChange.UpdateColumnType update) {
            out.addObject().put("op", "change_column").put("old", topLevel(table, update.fieldNames()))
                    .put("type", hiveType(update.newDataType(), null));
        } else if (change instanceof TableChange.UpdateColumnComment update) {
            out.addObject().put("op", "change_column").put("old", topLevel(table, update.fieldNames()))
                    .put("comment", update.newComment());
        } else if (change instanceof TableChange.UpdateColumnNullability update && update.nullable()) {
            // every Hive column may hold NULL: nothing to change
        } else if (change instanceof TableChange.SetProperty set) {
            if (set.property().equals(TableCatalog.PROP_LOCATION)) {
                out.addObject().put("op", "set_location").put("location", set.value());
            } else if (set.property().equals(TableCatalog.PROP_PROVIDER) || RESERVED.contains(set.property())) {
                throw new UnsupportedOperationException("table " + table + ": its " + set.property() + " cannot be changed");
            } else if (last != null && last.path("op").asText().equals("set_properties")) {
                ((ObjectNode) last.path("properties")).put(set.property(), set.value());
            } else {
                out.addObject().put("op", "set_properties").putObject("properties").put(set.property(), set.value());
            }
        } else if (change instanceof TableChange.RemoveProperty remove) {
            // Spark checked the key against the table's properties unless the statement said IF EXISTS
            if (last != null && last.path("op").asText().equals("unset_properties")) {
                ((ArrayNode) last.path("keys")).add(remove.property());
            } else {
                ObjectNode unset = out.addObject().put("op", "unset_properties").put("if_exists", true);
                unset.putArray("keys").add(remove.property());
            }
        } else {
            throw new UnsupportedOperationException("table " + table + ": " + describe(change) + " is not supported "
                    + "(Hive tables have no column positions, defaults or NOT NULL columns)");
        }
    }

    private static ObjectNode replaceColumns(String table, JsonNode view, TableChange[] changes) {
        List<ObjectNode> columns = new ArrayList<>();
        for (JsonNode column : view.path("columns")) {
            if (!column.path("partition_key").asBoolean(false)) {
                ObjectNode kept = ServiceClient.JSON.createObjectNode().put("name", column.path("name").asText())
                        .put("type", column.path("type").asText());
                if (column.hasNonNull("comment") && !column.path("comment").asText().isEmpty()) {
                    kept.put("comment", column.path("comment").asText());
                }
                columns.add(kept);
            }
        }
        for (TableChange change : changes) {
            if (change instanceof TableChange.DeleteColumn delete) {
                String name = topLevel(table, delete.fieldNames());
                boolean removed = columns.removeIf(column -> column.path("name").asText().equalsIgnoreCase(name));
                if (!removed && !Boolean.TRUE.equals(delete.ifExists())) {
                    throw new IllegalArgumentException("table " + table + " has no data column '" + name + "' to drop");
                }
            } else if (change instanceof TableChange.AddColumn add) {
                checkAdd(table, add);
                columns.add(column(topLevel(table, add.fieldNames()), add.dataType(), null, add.comment()));
            } else if (change instanceof TableChange.ColumnChange) {
                ObjectNode column = find(table, columns, ((TableChange.ColumnChange) change).fieldNames());
                if (change instanceof TableChange.RenameColumn rename) {
                    column.put("name", rename.newName());
                } else if (change instanceof TableChange.UpdateColumnType update) {
                    column.put("type", hiveType(update.newDataType(), null));
                } else if (change instanceof TableChange.UpdateColumnComment update) {
                    column.put("comment", update.newComment());
                } else if (!(change instanceof TableChange.UpdateColumnNullability update && update.nullable())) {
                    throw new UnsupportedOperationException("table " + table + ": " + describe(change) + " is not supported");
                }
            }
        }
        ObjectNode replace = ServiceClient.JSON.createObjectNode().put("op", "replace_columns");
        replace.putArray("columns").addAll(columns);
        return replace;
    }

    private static ObjectNode find(String table, List<ObjectNode> columns, String[] fieldNames) {
        String name = topLevel(table, fieldNames);
        for (ObjectNode column : columns) {
            if (column.path("name").asText().equalsIgnoreCase(name)) {
                return column;
            }
        }
        throw new IllegalArgumentException("table " + table + " has no data column '" + name + "'");
    }

    private static void checkAdd(String table, TableChange.AddColumn add) {
        if (add.position() != null) {
            throw new UnsupportedOperationException("table " + table + ": ADD COLUMNS with FIRST or AFTER is not supported "
                    + "(Hive adds columns after the last data column)");
        }
        if (add.defaultValue() != null) {
            throw new UnsupportedOperationException("table " + table + ": column defaults are not supported");
        }
    }

    private static String topLevel(String table, String[] fieldNames) {
        if (fieldNames.length != 1) {
            throw new UnsupportedOperationException("table " + table + ": changing the nested field "
                    + String.join(".", fieldNames) + " is not supported; change its top-level column's type instead");
        }
        return fieldNames[0];
    }

    private static String describe(TableChange change) {
        return "the change " + change.getClass().getSimpleName();
    }
}
