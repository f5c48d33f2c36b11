package hmscatalog.spark;

import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.FilePartition$;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.internal.SQLConf;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark partitions made of whole splits, the way Spark makes them of its own files.
 *
 * The split stays the planner's unit (its byte range, its block's hosts); what changes is how many go to
 * one task. Spark's file sources pack files into partitions of up to {@code maxSplitBytes}, charging
 * {@code spark.sql.files.openCostInBytes} per file, where
 * {@code maxSplitBytes = min(maxPartitionBytes, max(openCost, totalBytes / minPartitionNum))} and
 * {@code minPartitionNum} is {@code spark.sql.files.minPartitionNum} or the default parallelism. The same
 * numbers are used here, and Spark's own packing ({@code FilePartition.getFilePartitions}: largest first,
 * next fit, and its cap {@code spark.sql.files.maxPartitionNum}) does the packing, so a table of many small
 * files is read in about as many tasks as Spark reads the same files in, and a split bigger than
 * {@code maxSplitBytes} is a task of its own.
 *
 * Where the plan names hosts, the splits of each host are packed apart (a split goes with the first host
 * holding it), so a task reads bytes of one host; Spark's FilePartition then prefers the (at most 3)
 * hosts holding most of its bytes.
 */
final class SplitPacking {
    private SplitPacking() {
    }

    /** The bytes per partition Spark would aim at for these splits under the session's settings. */
    static long maxSplitBytes(SparkSession spark, List<PartitionedFile> splits) {
        SQLConf conf = spark.sessionState().conf();
        long openCost = conf.filesOpenCostInBytes();
        long total = 0;
        for (PartitionedFile split : splits) {
            total += split.length() + openCost;
        }
        int minPartitions = conf.filesMinPartitionNum().isDefined()
                ? (Integer) conf.filesMinPartitionNum().get() : spark.leafNodeDefaultParallelism();
        long bytesPerCore = total / Math.max(1, minPartitions);
        return Math.min(conf.filesMaxPartitionBytes(), Math.max(openCost, bytesPerCore));
    }

    /** The splits as Spark input partitions, indexed from 0. */
    static FilePartition[] pack(SparkSession spark, List<PartitionedFile> splits) {
        if (splits.isEmpty()) {
            return new FilePartition[0];
        }
        long maxSplitBytes = maxSplitBytes(spark, splits);
        Map<String, List<PartitionedFile>> byHost = new LinkedHashMap<>();
        for (PartitionedFile split : splits) {
            String host = split.locations().length == 0 ? "" : split.locations()[0];
            byHost.computeIfAbsent(host, key -> new ArrayList<>()).add(split);
        }
        List<FilePartition> partitions = new ArrayList<>();
        for (List<PartitionedFile> group : byHost.values()) {
            group.sort(Comparator.comparingLong(PartitionedFile::length).reversed());
            scala.collection.immutable.Seq<FilePartition> packed = FilePartition$.MODULE$.getFilePartitions(
                    spark, scala.collection.immutable.List.from(CollectionConverters.asScala(group)), maxSplitBytes);
            for (FilePartition partition : CollectionConverters.asJava(packed)) {
                partitions.add(new FilePartition(partitions.size(), partition.files()));
            }
        }
        return partitions.toArray(new FilePartition[0]);
    }
}
