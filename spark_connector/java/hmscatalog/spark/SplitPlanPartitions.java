package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.spark.paths.SparkPath;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

import scala.Option;

/**
 * A split plan (the service's JSON) as Spark input partitions: one FilePartition per split, holding one
 * PartitionedFile with the split's byte range, file length, modification time, hosts and partition
 * values, so partitions == splits and the scheduler sees the split's hosts.
 */
final class SplitPlanPartitions {
    private final InputPartition[] partitions;
    private final String reader;
    private final long bytes;

    private final String pythonOnly;

    private final Map<Integer, IcebergDeletes.SplitDeletes> deletes;

    private SplitPlanPartitions(InputPartition[] partitions, String reader, long bytes, String pythonOnly,
                                Map<Integer, IcebergDeletes.SplitDeletes> deletes) {
        this.partitions = partitions;
        this.reader = reader;
        this.bytes = bytes;
        this.pythonOnly = pythonOnly;
        this.deletes = deletes;
    }

    InputPartition[] partitions() {
        return partitions;
    }

    /** parquet, orc, hive-serde, hive-json, spark-csv or spark-json: which reader factory reads every split. */
    String reader() {
        return reader;
    }

    long bytes() {
        return bytes;
    }

    static SplitPlanPartitions of(HmsTable table, JsonNode plan, StructType partitionSchema, String timeZone) {
        JsonNode splits = plan.path("splits");
        TreeSet<String> formats = new TreeSet<>();
        String pythonOnly = null;
        boolean hasDeletes = false;
        InputPartition[] partitions = new InputPartition[splits.size()];
        long bytes = 0;
        scala.collection.immutable.Map<String, Object> noMetadata = scala.collection.immutable.Map$.MODULE$.empty();
        for (int index = 0; index < splits.size(); index++) {
            JsonNode split = splits.get(index);
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
            PartitionedFile file = new PartitionedFile(
                    partitionValues(split.path("partition_values"), partitionSchema, timeZone),
                    SparkPath.fromPathString(path), split.path("start").asLong(), length, hosts,
                    split.path("modification_time").asLong(0), split.path("file_length").asLong(), noMetadata);
            partitions[index] = new FilePartition(index, new PartitionedFile[] {file});
        }
        if (pythonOnly == null && formats.contains("avro")) {
            // Spark's jars carry no Avro data source (spark-avro is a separate package): the Python source reads it
            pythonOnly = "its files are Avro, which no reader among Spark's jars reads";
        }
        Map<Integer, IcebergDeletes.SplitDeletes> deletes = null;
        if (pythonOnly == null && hasDeletes) {
            String reader = readerFor(table, formats);
            Object planned = reader.equals("parquet") ? IcebergDeletes.plan(splits, table.dataSchema())
                    : "its " + reader + " data files have Iceberg delete files to apply";
            if (planned instanceof String why) {
                pythonOnly = why;
            } else {
                @SuppressWarnings("unchecked")
                Map<Integer, IcebergDeletes.SplitDeletes> found = (Map<Integer, IcebergDeletes.SplitDeletes>) planned;
                deletes = found;
            }
        }
        if (pythonOnly != null) {
            return new SplitPlanPartitions(partitions, "python", bytes, pythonOnly, null);
        }
        return new SplitPlanPartitions(partitions, readerFor(table, formats), bytes, null, deletes);
    }

    /** The Iceberg delete files of each split with some (by split index), or null when there are none. */
    Map<Integer, IcebergDeletes.SplitDeletes> deletes() {
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
