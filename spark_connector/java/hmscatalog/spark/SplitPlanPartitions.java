package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.spark.paths.SparkPath;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

import scala.Option;

/**
 * A split plan (the service's JSON) as the splits Spark reads: each split one PartitionedFile with the
 * split's byte range, file length, modification time, hosts and the partition values Spark's reader
 * appends to its rows, and beside it the split's full partition row (every partition column, in the
 * table's key order), on which partition filters are evaluated. Which splits go to one Spark task is
 * decided later ({@link SplitPacking}), after the filters known at run time have dropped some.
 */
final class SplitPlanPartitions {
    /** One split of the plan: what the reader reads, and the partition it belongs to. */
    record PlannedSplit(PartitionedFile file, InternalRow partitionRow, JsonNode json) {
        long length() {
            return file.length();
        }
    }

    private final List<PlannedSplit> splits;
    private final String reader;
    private final long bytes;

    private final String pythonOnly;

    private final Map<String, IcebergDeletes.SplitDeletes> deletes;

    private SplitPlanPartitions(List<PlannedSplit> splits, String reader, long bytes, String pythonOnly,
                                Map<String, IcebergDeletes.SplitDeletes> deletes) {
        this.splits = splits;
        this.reader = reader;
        this.bytes = bytes;
        this.pythonOnly = pythonOnly;
        this.deletes = deletes;
    }

    List<PlannedSplit> splits() {
        return splits;
    }

    /** parquet, orc, hive-serde, hive-json, spark-csv or spark-json: which reader factory reads every split. */
    String reader() {
        return reader;
    }

    /** The bytes of every split of the plan. */
    long bytes() {
        return bytes;
    }

    static SplitPlanPartitions of(HmsTable table, JsonNode plan, StructType readPartitionSchema, String timeZone) {
        JsonNode splitNodes = plan.path("splits");
        TreeSet<String> formats = new TreeSet<>();
        String pythonOnly = null;
        boolean hasDeletes = false;
        List<PlannedSplit> splits = new ArrayList<>(splitNodes.size());
        long bytes = 0;
        StructType partitionSchema = table.partitionSchema();
        int[] readOrdinals = new int[readPartitionSchema.fields().length];
        for (int i = 0; i < readOrdinals.length; i++) {
            readOrdinals[i] = partitionSchema.fieldIndex(readPartitionSchema.fields()[i].name());
        }
        scala.collection.immutable.Map<String, Object> noMetadata = scala.collection.immutable.Map$.MODULE$.empty();
        for (JsonNode split : splitNodes) {
            String path = split.path("path").asText();
            hasDeletes |= split.path("delete_files").size() > 0;
            if (pythonOnly == null && split.path("log_files").size() > 0) {
                pythonOnly = "it is a Hudi merge-on-read snapshot (" + path + " has log files to merge)";
            }
            formats.add(split.path("file_format").asText("").toLowerCase(Locale.ROOT));
            JsonNode hostNodes = split.path("hosts");
            String[] hosts = new String[hostNodes.size()];
            for (int h = 0; h < hosts.length; h++) {
                hosts[h] = hostNodes.get(h).asText();
            }
            long length = split.path("length").asLong();
            bytes += length;
            InternalRow partitionRow = partitionValues(split.path("partition_values"), partitionSchema, timeZone);
            GenericInternalRow readRow = new GenericInternalRow(readOrdinals.length);
            for (int i = 0; i < readOrdinals.length; i++) {
                DataType type = partitionSchema.fields()[readOrdinals[i]].dataType();
                readRow.update(i, partitionRow.isNullAt(readOrdinals[i]) ? null : partitionRow.get(readOrdinals[i], type));
            }
            PartitionedFile file = new PartitionedFile(readRow, SparkPath.fromPathString(path), split.path("start").asLong(),
                    length, hosts, split.path("modification_time").asLong(0), split.path("file_length").asLong(), noMetadata);
            splits.add(new PlannedSplit(file, partitionRow, split));
        }
        if (pythonOnly == null && formats.contains("avro")) {
            // Spark's jars carry no Avro data source (spark-avro is a separate package): the Python source reads it
            pythonOnly = "its files are Avro, which no reader among Spark's jars reads";
        }
        Map<String, IcebergDeletes.SplitDeletes> deletes = null;
        if (pythonOnly == null && hasDeletes) {
            String reader = readerFor(table, formats);
            Object planned = reader.equals("parquet") ? IcebergDeletes.plan(splitNodes, table.dataSchema())
                    : "its " + reader + " data files have Iceberg delete files to apply";
            if (planned instanceof String why) {
                pythonOnly = why;
            } else {
                @SuppressWarnings("unchecked")
                Map<String, IcebergDeletes.SplitDeletes> found = (Map<String, IcebergDeletes.SplitDeletes>) planned;
                deletes = found;
            }
        }
        if (pythonOnly != null) {
            return new SplitPlanPartitions(splits, "python", bytes, pythonOnly, null);
        }
        return new SplitPlanPartitions(splits, readerFor(table, formats), bytes, null, deletes);
    }

    /** The Iceberg delete files of each data file with some (by its path as the plan spells it), or null when none. */
    Map<String, IcebergDeletes.SplitDeletes> deletes() {
        return deletes;
    }

    /** Why only the Python source can read this plan (null: the JVM readers can). */
    String pythonOnly() {
        return pythonOnly;
    }

    private static String readerFor(HmsTable table, TreeSet<String> formats) {
        if (formats.isEmpty()) {
            return "parquet";  // no split: nothing is read
        }
        if (formats.size() > 1) {
            throw unsupported(table, "its splits mix file formats " + formats);
        }
        String format = formats.first();
        if (format.equals("parquet") || format.equals("orc")) {
            return format;
        }
        boolean sparkSource = table.view().hasNonNull("spark_provider");
        if (sparkSource && (format.equals("csv") || format.equals("json"))) {
            return "spark-" + format;  // Spark's own CSV and JSON readers, with the options the table was made with
        }
        boolean hiveSerde = !sparkSource && table.view().path("storage").hasNonNull("serde");
        if (hiveSerde && format.equals("json") && !loadable(table.view().path("storage").path("serde").asText())) {
            // Hive's JSON serdes (hcatalog's, openx's) are not among Spark's jars: Spark's JSON reader reads
            // their JSON lines, matching fields to columns by name, case-insensitively, as they do
            return "hive-json";
        }
        if (hiveSerde && (format.equals("text") || format.equals("csv") || format.equals("json"))) {
            return "hive-serde";
        }
        throw unsupported(table, "its files are " + format + (hiveSerde ? "" : " written by a Spark data source"));
    }

    private static boolean loadable(String className) {
        try {
            Class.forName(className, false, Thread.currentThread().getContextClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    static UnsupportedOperationException unsupported(HmsTable table, String why) {
        return new UnsupportedOperationException("the native connector cannot read " + table.fullName() + " yet: " + why
                + "; a PySpark driver reads it through the Python source by itself (register it with "
                + "planner.spark.register(spark)); elsewhere use spark.read.format(\"hms\") from PySpark, or hms-catalog's SELECT");
    }

    /** The split's partition values, typed as Spark's own Hive reader types them (a Cast from the string). */
    static InternalRow partitionValues(JsonNode pairs, StructType schema, String timeZone) {
        Map<String, String> values = new HashMap<>();
        for (JsonNode pair : pairs) {
            values.put(pair.get(0).asText().toLowerCase(Locale.ROOT), pair.get(1).isNull() ? null : pair.get(1).asText());
        }
        StructField[] fields = schema.fields();
        Object[] row = new Object[fields.length];
        for (int i = 0; i < fields.length; i++) {
            String raw = values.get(fields[i].name().toLowerCase(Locale.ROOT));
            if (raw == null) {  // the plan gives Hive's default partition as null
                row[i] = null;
            } else if (fields[i].dataType() == DataTypes.StringType) {
                row[i] = UTF8String.fromString(raw);
            } else {
                Literal literal = new Literal(UTF8String.fromString(raw), DataTypes.StringType);
                row[i] = new Cast(literal, fields[i].dataType(), Option.apply(timeZone)).eval(null);
            }
        }
        return new GenericInternalRow(row);
    }
}
