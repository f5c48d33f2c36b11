package hmscatalog.spark;

import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.util.Utils;

import java.util.Map;

/**
 * What a scan read and what runtime filters spared it, as SQL metrics of the scan node (the Spark UI's
 * SQL tab, and {@code executedPlan().metrics()}). Counted on the driver when the splits are packed, after
 * the runtime filters; the names match those of Spark's own file scans where the meaning is the same.
 * Spark makes these classes by name to show the metrics, hence public nested classes with no arguments.
 */
public final class ScanMetrics {
    static final String FILES = "numFiles";
    static final String BYTES = "filesSize";
    static final String SPLITS = "numSplits";
    static final String PARTITIONS = "numPartitions";
    static final String SKIPPED_FILES = "skippedFiles";
    static final String SKIPPED_BYTES = "skippedBytes";

    private ScanMetrics() {
    }

    static CustomMetric[] supported() {
        return new CustomMetric[] {new Files(), new Bytes(), new Splits(), new Partitions(), new SkippedFiles(), new SkippedBytes()};
    }

    static CustomTaskMetric[] values(Map<String, Long> counts) {
        return counts.entrySet().stream().map(entry -> new Value(entry.getKey(), entry.getValue())).toArray(CustomTaskMetric[]::new);
    }

    private record Value(String name, long value) implements CustomTaskMetric {
    }

    /** A sum of bytes, shown as a size. */
    public abstract static class SizeMetric extends CustomSumMetric {
        @Override
        public String aggregateTaskMetrics(long[] taskMetrics) {
            long sum = 0;
            for (long value : taskMetrics) {
                sum += value;
            }
            return Utils.bytesToString(sum);
        }
    }

    public static final class Files extends CustomSumMetric {
        @Override
        public String name() {
            return FILES;
        }

        @Override
        public String description() {
            return "number of files read";
        }
    }

    public static final class Bytes extends SizeMetric {
        @Override
        public String name() {
            return BYTES;
        }

        @Override
        public String description() {
            return "size of files read";
        }
    }

    public static final class Splits extends CustomSumMetric {
        @Override
        public String name() {
            return SPLITS;
        }

        @Override
        public String description() {
            return "number of splits read";
        }
    }

    public static final class Partitions extends CustomSumMetric {
        @Override
        public String name() {
            return PARTITIONS;
        }

        @Override
        public String description() {
            return "number of table partitions read";
        }
    }

    public static final class SkippedFiles extends CustomSumMetric {
        @Override
        public String name() {
            return SKIPPED_FILES;
        }

        @Override
        public String description() {
            return "files skipped by runtime filters";
        }
    }

    public static final class SkippedBytes extends SizeMetric {
        @Override
        public String name() {
            return SKIPPED_BYTES;
        }

        @Override
        public String description() {
            return "bytes skipped by runtime filters";
        }
    }
}
