package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.connector.expressions.FieldReference;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.colstats.ColumnStatistics;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import scala.Option;
import scala.math.Ordering;

/**
 * A scan's statistics for Spark's optimizer, from what the service's plan says of the table and what is
 * left of the plan after the partition filters.
 *
 * Sizes are measured as Spark measures its own Hive tables: the bytes of the files left, times
 * {@code spark.sql.sources.fileCompressionFactor}, scaled by the width of the columns read over the width
 * of all of them (each row counted with Spark's 8 bytes of overhead), which is what Spark's size-only
 * estimate of a projection of its own table gives. A partitioned Hive table read with no partition filter
 * is, for Spark, the size its table statistics give, or {@code spark.sql.defaultSizeInBytes} when it has
 * none (Spark lists no files to size it): so it is here too, and that unknown size is reported as it is,
 * not scaled by the columns read. Spark's runtime-filter rule counts a scan of exactly
 * {@code defaultSizeInBytes} as unknown (size 0) and puts no bloom filter on it; scaled, the same unknown
 * size read as a known 2 EiB scan and drew a bloom filter on the connector's side only (in TPC-DS q24 it
 * made the two {@code store_sales} scans of one CTE differ, so Spark lost the reuse of their shuffle).
 * So a dimension table is broadcast, a fact table is not, and bloom filters on large probe sides are
 * injected where Spark would decide the same for its own tables. Row counts and column statistics come
 * from the metastore or Iceberg when the plan has them (Spark's own {@code ANALYZE} results first):
 * the rows of the partitions left when every one of them is known, else the table's count scaled by the
 * bytes left; nothing when nothing is known, as Spark reports nothing for a table it never analysed.
 */
final class ScanStatistics implements Statistics {
    private final long sizeInBytes;
    private final OptionalLong numRows;
    private final Map<NamedReference, ColumnStatistics> columns;

    private ScanStatistics(long sizeInBytes, OptionalLong numRows, Map<NamedReference, ColumnStatistics> columns) {
        this.sizeInBytes = sizeInBytes;
        this.numRows = numRows;
        this.columns = columns;
    }

    @Override
    public OptionalLong sizeInBytes() {
        return OptionalLong.of(sizeInBytes);
    }

    @Override
    public OptionalLong numRows() {
        return numRows;
    }

    @Override
    public Map<NamedReference, ColumnStatistics> columnStats() {
        return columns;
    }

    /** The statistics of reading {@code readSchema} from the splits {@code kept} of {@code plan}. */
    static ScanStatistics of(HmsTable table, JsonNode plan, long plannedBytes, List<SplitPlanPartitions.PlannedSplit> kept,
                             StructType readSchema, String timeZone, boolean partitionFiltered) {
        JsonNode statistics = plan.path("statistics");
        long keptBytes = 0;
        Set<String> partitions = new HashSet<>();
        for (SplitPlanPartitions.PlannedSplit split : kept) {
            keptBytes += split.length();
            partitions.add(partitionKey(split.json().path("partition_values")));
        }
        double factor = SQLConf.get().fileCompressionFactor();
        long fullWidth = 8 + table.dataSchema().defaultSize() + table.partitionSchema().defaultSize();
        long readWidth = 8 + readSchema.defaultSize();
        double measured = keptBytes * factor;
        boolean unknown = false;
        if (!table.isIceberg() && table.partitionSchema().fields().length > 0 && !partitionFiltered) {
            JsonNode tableBytes = statistics.path("table_bytes");
            unknown = !(tableBytes.canConvertToLong() && tableBytes.asLong() > 0);
            measured = unknown ? 0 : tableBytes.asLong();
        }
        long size = unknown ? SQLConf.get().defaultSizeInBytes()
                : Math.max(1L, (long) (measured * readWidth / (double) fullWidth));
        OptionalLong rows = rows(statistics, partitions, keptBytes, plannedBytes);
        Map<NamedReference, ColumnStatistics> columns = new HashMap<>();
        JsonNode columnNodes = statistics.path("columns");
        for (StructField field : readSchema.fields()) {
            if (table.isPartitionKey(field.name())) {
                columns.put(FieldReference.column(field.name()), partitionColumn(table, field, kept));
                continue;
            }
            JsonNode node = lookup(columnNodes, field.name());
            if (node != null) {
                columns.put(FieldReference.column(field.name()), dataColumn(node, field.dataType(), rows, timeZone));
            }
        }
        return new ScanStatistics(size, rows, columns);
    }

    private static OptionalLong rows(JsonNode statistics, Set<String> partitions, long keptBytes, long plannedBytes) {
        JsonNode byPartition = statistics.path("partition_rows");
        if (byPartition.isObject() && !partitions.isEmpty()) {
            long sum = 0;
            boolean known = true;
            for (String partition : partitions) {
                JsonNode count = byPartition.get(partition);
                if (count == null || !count.canConvertToLong()) {
                    known = false;
                    break;
                }
                sum += count.asLong();
            }
            if (known) {
                return OptionalLong.of(sum);
            }
        }
        JsonNode total = statistics.path("row_count");
        if (total.canConvertToLong() && !total.isNull()) {
            if (keptBytes >= plannedBytes || plannedBytes <= 0) {
                return OptionalLong.of(total.asLong());
            }
            return OptionalLong.of(Math.round(total.asLong() * (keptBytes / (double) plannedBytes)));
        }
        return OptionalLong.empty();
    }

    /** A partition's key in the plan's {@code partition_rows}: its raw values joined by NUL, NULL as U+0001. */
    static String partitionKey(JsonNode partitionValues) {
        StringBuilder key = new StringBuilder();
        for (int i = 0; i < partitionValues.size(); i++) {
            if (i > 0) {
                key.append('\u0000');
            }
            JsonNode value = partitionValues.get(i).get(1);
            key.append(value == null || value.isNull() ? "\u0001" : value.asText());
        }
        return key.toString();
    }

    /** A partition column's statistics, from the values of the partitions left: exact, and free. */
    private static ColumnStatistics partitionColumn(HmsTable table, StructField field, List<SplitPlanPartitions.PlannedSplit> kept) {
        int ordinal = table.partitionSchema().fieldIndex(field.name());
        DataType type = field.dataType();
        @SuppressWarnings("unchecked")
        Ordering<Object> ordering = (Ordering<Object>) (Ordering<?>)
                org.apache.spark.sql.catalyst.types.PhysicalDataType$.MODULE$.ordering(type);
        Set<Object> distinct = new HashSet<>();
        Object min = null;
        Object max = null;
        for (SplitPlanPartitions.PlannedSplit split : kept) {
            InternalRow row = split.partitionRow();
            if (row.isNullAt(ordinal)) {
                continue;
            }
            Object value = row.get(ordinal, type);
            distinct.add(value);
            min = min == null || ordering.compare(value, min) < 0 ? value : min;
            max = max == null || ordering.compare(value, max) > 0 ? value : max;
        }
        return new Column(OptionalLong.of(distinct.size()), Optional.ofNullable(min), Optional.ofNullable(max),
                OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty());
    }

    private static ColumnStatistics dataColumn(JsonNode node, DataType type, OptionalLong rows, String timeZone) {
        OptionalLong distinct = optionalLong(node.path("distinct_count"));
        if (distinct.isPresent() && rows.isPresent() && distinct.getAsLong() > rows.getAsLong()) {
            distinct = rows;  // a table-wide count, and fewer rows left
        }
        return new Column(distinct, value(node.path("min"), type, timeZone), value(node.path("max"), type, timeZone),
                optionalLong(node.path("null_count")), optionalLong(node.path("avg_len")), optionalLong(node.path("max_len")));
    }

    /** A min or max given as text, in Spark's internal form of the column's type (a Cast, as Spark would read it). */
    private static Optional<Object> value(JsonNode text, DataType type, String timeZone) {
        if (text.isMissingNode() || text.isNull() || !orderable(type)) {
            return Optional.empty();
        }
        Object value = new Cast(new Literal(UTF8String.fromString(text.asText()), DataTypes.StringType), type,
                Option.apply(timeZone)).eval(null);
        return Optional.ofNullable(value);
    }

    private static boolean orderable(DataType type) {
        return type instanceof org.apache.spark.sql.types.NumericType || type instanceof org.apache.spark.sql.types.DateType
                || type instanceof org.apache.spark.sql.types.TimestampType || type instanceof org.apache.spark.sql.types.BooleanType
                || type instanceof org.apache.spark.sql.types.TimestampNTZType;
    }

    private static OptionalLong optionalLong(JsonNode node) {
        return node.canConvertToLong() && !node.isNull() && node.asLong() >= 0 ? OptionalLong.of(node.asLong()) : OptionalLong.empty();
    }

    private static JsonNode lookup(JsonNode columns, String name) {
        for (Map.Entry<String, JsonNode> entry : columns.properties()) {
            if (entry.getKey().toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT))) {
                return entry.getValue();
            }
        }
        return null;
    }

    private record Column(OptionalLong distinctCount, Optional<Object> min, Optional<Object> max, OptionalLong nullCount,
                          OptionalLong avgLen, OptionalLong maxLen) implements ColumnStatistics {
    }
}
