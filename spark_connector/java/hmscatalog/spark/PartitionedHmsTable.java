package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.PartitionsAlreadyExistException;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.connector.catalog.SupportsAtomicPartitionManagement;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A partitioned Hive (or Spark data source) table whose partitions Spark manages through the service:
 * {@code ALTER TABLE .. ADD/DROP PARTITION} (several at once in one call, all or none) and
 * {@code SHOW PARTITIONS}.
 *
 * Partition values travel as the metastore spells them: Spark's typed values are cast to strings as Spark
 * casts them for its own partition paths, and the service's {@code k=v/k2=v2} names are escaped and
 * unescaped by Spark's own rules (Hive's) and typed as the scan types them. The service checks each value
 * against its key's type.
 */
final class PartitionedHmsTable extends HmsTable implements SupportsAtomicPartitionManagement {
    PartitionedHmsTable(String sparkCatalog, ServiceClient client, TableCache cache, String catalogPath, JsonNode view) {
        super(sparkCatalog, client, cache, catalogPath, view);
    }

    @Override
    public StructType partitionSchema() {
        return super.partitionSchema();
    }

    @Override
    public void createPartitions(InternalRow[] idents, Map<String, String>[] properties) throws PartitionsAlreadyExistException {
        ObjectNode body = ServiceClient.JSON.createObjectNode().put("if_not_exists", false);
        ArrayNode partitions = body.putArray("partitions");
        for (int i = 0; i < idents.length; i++) {
            ObjectNode partition = partitions.addObject();
            ObjectNode values = partition.putObject("values");
            String[] texts = texts(idents[i]);
            for (int k = 0; k < texts.length; k++) {
                values.put(partitionSchema().fields()[k].name(), texts[k]);
            }
            String location = properties[i] == null ? null : properties[i].get("location");
            if (location != null) {
                partition.put("location", location);
            }
        }
        try {
            client().post(tablePath() + "/partitions", body);
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 409) {
                throw new PartitionsAlreadyExistException(fullName(),
                        CollectionConverters.asScala(Arrays.asList(idents)).toSeq(), partitionSchema());
            }
            throw e;
        } finally {
            invalidate();
        }
    }

    @Override
    public boolean dropPartitions(InternalRow[] idents) {
        return drop(idents, false);
    }

    @Override
    public boolean purgePartitions(InternalRow[] idents) {
        return drop(idents, true);
    }

    private boolean drop(InternalRow[] idents, boolean purge) {
        StringBuilder query = new StringBuilder("?if_exists=false&purge=").append(purge);
        for (InternalRow ident : idents) {
            query.append("&name=").append(URLEncoder.encode(partitionName(ident), StandardCharsets.UTF_8));
        }
        try {
            client().delete(tablePath() + "/partitions" + query);
            return true;
        } catch (ServiceClient.ServiceException e) {
            if (e.status == 404) {
                return false;
            }
            throw e;
        } finally {
            invalidate();
        }
    }

    @Override
    public void replacePartitionMetadata(InternalRow ident, Map<String, String> properties) {
        throw new UnsupportedOperationException("the partitions of " + fullName() + " have no metadata to replace here; "
                + "ADD PARTITION .. LOCATION places a partition");
    }

    @Override
    public Map<String, String> loadPartitionMetadata(InternalRow ident) {
        return Collections.emptyMap();
    }

    /**
     * The partitions whose keys {@code names} have {@code ident}'s values (all of them when {@code names} is
     * empty), narrowed by the service as SHOW PARTITIONS .. WHERE narrows them.
     */
    @Override
    public InternalRow[] listPartitionIdentifiers(String[] names, InternalRow ident) {
        StructType schema = partitionSchema();
        String timeZone = SQLConf.get().sessionLocalTimeZone();
        List<String> conditions = new ArrayList<>();
        int[] ordinals = new int[names.length];
        for (int i = 0; i < names.length; i++) {
            ordinals[i] = schema.fieldIndex(field(names[i]).name());
            DataType type = schema.fields()[ordinals[i]].dataType();
            String text = text(ident.isNullAt(i) ? null : ident.get(i, type), type);
            String column = "`" + schema.fields()[ordinals[i]].name().replace("`", "``") + "`";
            conditions.add(text == null ? column + " IS NULL"
                    : column + " = '" + text.replace("\\", "\\\\").replace("'", "\\'") + "'");
        }
        String query = conditions.isEmpty() ? ""
                : "?where=" + URLEncoder.encode(String.join(" AND ", conditions), StandardCharsets.UTF_8);
        JsonNode answer = client().get(tablePath() + "/partitions" + query);
        List<InternalRow> rows = new ArrayList<>();
        for (JsonNode name : answer.path("partitions")) {
            InternalRow row = SplitPlanPartitions.partitionValues(pairs(name.asText()), schema, timeZone);
            boolean matches = true;  // the service narrowed already; checked again on the typed values
            for (int i = 0; i < names.length && matches; i++) {
                DataType type = schema.fields()[ordinals[i]].dataType();
                Object wanted = ident.isNullAt(i) ? null : ident.get(i, type);
                Object found = row.isNullAt(ordinals[i]) ? null : row.get(ordinals[i], type);
                matches = Objects.equals(wanted, found);
            }
            if (matches) {
                rows.add(row);
            }
        }
        return rows.toArray(new InternalRow[0]);
    }

    private StructField field(String name) {
        for (StructField field : partitionSchema().fields()) {
            if (field.name().equalsIgnoreCase(name)) {
                return field;
            }
        }
        throw new IllegalArgumentException("'" + name + "' is not a partition column of " + fullName());
    }

    /** The partition's values as the metastore keeps them (null: Hive's default partition). */
    private String[] texts(InternalRow ident) {
        StructField[] fields = partitionSchema().fields();
        String[] texts = new String[fields.length];
        for (int i = 0; i < fields.length; i++) {
            texts[i] = text(ident.isNullAt(i) ? null : ident.get(i, fields[i].dataType()), fields[i].dataType());
        }
        return texts;
    }

    /** Spark's partition value as text, cast as Spark casts it for its own partition paths. */
    private static String text(Object value, DataType type) {
        if (value == null) {
            return null;
        }
        Object cast = new Cast(new Literal(value, type), DataTypes.StringType,
                Option.apply(SQLConf.get().sessionLocalTimeZone())).eval(null);
        return cast == null ? null : cast.toString();
    }

    /** {@code k=v/k2=v2} with Hive's escaping, as the service names partitions in DROP. */
    private String partitionName(InternalRow ident) {
        String[] texts = texts(ident);
        StructField[] fields = partitionSchema().fields();
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < fields.length; i++) {
            parts.add(ExternalCatalogUtils.getPartitionPathString(fields[i].name().toLowerCase(Locale.ROOT), texts[i]));
        }
        return String.join("/", parts);
    }

    /** A service's partition name as the [key, value] pairs a split plan carries (null for Hive's default). */
    private static ArrayNode pairs(String name) {
        ArrayNode pairs = ServiceClient.JSON.createArrayNode();
        for (String part : name.split("/")) {
            int equals = part.indexOf('=');
            String value = ExternalCatalogUtils.unescapePathName(part.substring(equals + 1));
            ArrayNode pair = pairs.addArray().add(ExternalCatalogUtils.unescapePathName(part.substring(0, equals)));
            if (value.equals(ExternalCatalogUtils.DEFAULT_PARTITION_NAME())) {
                pair.addNull();
            } else {
                pair.add(value);
            }
        }
        return pairs;
    }
}
