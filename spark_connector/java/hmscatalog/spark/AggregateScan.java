package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.Count;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.expressions.aggregate.Max;
import org.apache.spark.sql.connector.expressions.aggregate.Min;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import scala.Option;

/**
 * {@code count(*)}, {@code count(col)}, {@code min(col)} and {@code max(col)}, grouped by partition columns or
 * not at all, answered from metadata without reading rows: the service answers each partition from what
 * holds the exact figures (Parquet footers, ORC footers, Iceberg manifests of files without deletes, Hive
 * statistics marked accurate that match the files), or says it cannot, and then Spark scans as usual.
 * Partition filters are applied here to each partition's answer exactly as they are to splits. The rows
 * are one partial result per group; Spark's own final aggregation combines them.
 */
final class AggregateScan implements LocalScan {
    private final String description;
    private final StructType schema;
    private final InternalRow[] rows;

    private AggregateScan(String description, StructType schema, InternalRow[] rows) {
        this.description = description;
        this.schema = schema;
        this.rows = rows;
    }

    /** The request's {@code aggregate} object for this aggregation, or null when it is not one answered here. */
    static ObjectNode request(HmsTable table, Aggregation aggregation) {
        ObjectNode request = ServiceClient.JSON.createObjectNode();
        ArrayNode groups = request.putArray("group_by");
        for (Expression group : aggregation.groupByExpressions()) {
            String column = column(group);
            if (column == null || !table.isPartitionKey(column)) {
                return null;
            }
            groups.add(column);
        }
        ArrayNode functions = request.putArray("functions");
        for (AggregateFunc function : aggregation.aggregateExpressions()) {
            ObjectNode item = functions.addObject();
            if (function instanceof CountStar) {
                item.put("function", "count_star");
            } else if (function instanceof Count count && !count.isDistinct() && column(count.column()) != null) {
                item.put("function", "count").put("column", column(count.column()));
            } else if (function instanceof Min min && column(min.column()) != null) {
                item.put("function", "min").put("column", column(min.column()));
            } else if (function instanceof Max max && column(max.column()) != null) {
                item.put("function", "max").put("column", column(max.column()));
            } else {
                return null;
            }
        }
        return request;
    }

    /**
     * The scan answering {@code aggregation} from the service's answer, or null when the answer says the
     * metadata cannot answer it exactly. {@code keep} holds the partition filters the scan applies.
     */
    static AggregateScan of(HmsTable table, Aggregation aggregation, JsonNode answer, List<Predicate> keep, String timeZone) {
        if (answer == null || !answer.path("answered").asBoolean(false)) {
            return null;
        }
        PartitionFilter filter = new PartitionFilter(table.partitionSchema());
        List<StructField> fields = new ArrayList<>();
        List<DataType> groupTypes = new ArrayList<>();
        for (Expression group : aggregation.groupByExpressions()) {
            StructField field = table.partitionSchema().apply(table.partitionSchema().fieldIndex(partitionName(table, column(group))));
            fields.add(field);
            groupTypes.add(field.dataType());
        }
        List<DataType> valueTypes = new ArrayList<>();
        for (AggregateFunc function : aggregation.aggregateExpressions()) {
            DataType type = function instanceof CountStar || function instanceof Count
                    ? DataTypes.LongType : columnType(table, column(function.children()[0]));
            valueTypes.add(type);
            fields.add(new StructField(function.toString(), type, true, Metadata.empty()));
        }
        // one partial row per partition left after the filters, merged by group
        Map<List<Object>, Object[]> groups = new LinkedHashMap<>();
        for (JsonNode partition : answer.path("partitions")) {
            InternalRow values = SplitPlanPartitions.partitionValues(partition.path("partition_values"), table.partitionSchema(), timeZone);
            boolean kept = true;
            for (Predicate predicate : keep) {
                kept &= filter.matches(predicate, values);
            }
            if (!kept || (!groupTypes.isEmpty() && partition.path("rows").asLong(-1) == 0)) {
                continue;  // a partition of no rows makes no group, as Spark's own scan finds no row to group
            }
            List<Object> key = new ArrayList<>();
            for (int i = 0; i < groupTypes.size(); i++) {
                int ordinal = table.partitionSchema().fieldIndex(fields.get(i).name());
                key.add(values.isNullAt(ordinal) ? null : values.get(ordinal, groupTypes.get(i)));
            }
            Object[] merged = groups.computeIfAbsent(key, k -> new Object[valueTypes.size()]);
            JsonNode results = partition.path("values");
            for (int i = 0; i < valueTypes.size(); i++) {
                merged[i] = merge(aggregation.aggregateExpressions()[i], merged[i], typed(results.get(i), valueTypes.get(i), timeZone),
                        valueTypes.get(i));
            }
        }
        if (groupTypes.isEmpty() && groups.isEmpty()) {
            groups.put(List.of(), new Object[valueTypes.size()]);  // no partition left: one row, counts 0, min/max NULL
        }
        List<InternalRow> rows = new ArrayList<>();
        for (Map.Entry<List<Object>, Object[]> group : groups.entrySet()) {
            Object[] row = new Object[fields.size()];
            for (int i = 0; i < group.getKey().size(); i++) {
                row[i] = group.getKey().get(i);
            }
            for (int i = 0; i < valueTypes.size(); i++) {
                Object value = group.getValue()[i];
                row[groupTypes.size() + i] = value == null && valueTypes.get(i) == DataTypes.LongType ? 0L : value;
            }
            rows.add(new GenericInternalRow(row));
        }
        String description = "hms-catalog " + table.fullName() + " [" + table.view().path("format").asText() + "], PushedAggregation: "
                + aggregation.toString() + ", AnsweredFrom: " + answer.path("source").asText("metadata") + ", Partitions: "
                + answer.path("partitions").size();
        return new AggregateScan(description, new StructType(fields.toArray(new StructField[0])), rows.toArray(new InternalRow[0]));
    }

    @Override
    public InternalRow[] rows() {
        return rows;
    }

    @Override
    public StructType readSchema() {
        return schema;
    }

    @Override
    public String description() {
        return description;
    }

    private static Object merge(AggregateFunc function, Object current, Object next, DataType type) {
        if (next == null) {
            return current;
        }
        if (current == null) {
            return next;
        }
        if (function instanceof CountStar || function instanceof Count) {
            return (Long) current + (Long) next;
        }
        @SuppressWarnings("unchecked")
        scala.math.Ordering<Object> ordering = (scala.math.Ordering<Object>) (scala.math.Ordering<?>)
                org.apache.spark.sql.catalyst.types.PhysicalDataType$.MODULE$.ordering(type);
        int order = ordering.compare(next, current);
        return function instanceof Min ? (order < 0 ? next : current) : (order > 0 ? next : current);
    }

    private static Object typed(JsonNode value, DataType type, String timeZone) {
        if (value == null || value.isNull()) {
            return null;
        }
        if (type == DataTypes.LongType && value.canConvertToLong()) {
            return value.asLong();
        }
        return new Cast(new Literal(UTF8String.fromString(value.asText()), DataTypes.StringType), type, Option.apply(timeZone)).eval(null);
    }

    private static String column(Expression expression) {
        return expression instanceof NamedReference reference && reference.fieldNames().length == 1 ? reference.fieldNames()[0] : null;
    }

    private static String partitionName(HmsTable table, String column) {
        for (StructField field : table.partitionSchema().fields()) {
            if (field.name().equalsIgnoreCase(column)) {
                return field.name();
            }
        }
        return column;
    }

    private static DataType columnType(HmsTable table, String column) {
        String lower = column.toLowerCase(Locale.ROOT);
        for (StructField field : table.dataSchema().fields()) {
            if (field.name().toLowerCase(Locale.ROOT).equals(lower)) {
                return field.dataType();
            }
        }
        return table.partitionSchema().apply(partitionName(table, column)).dataType();
    }
}
