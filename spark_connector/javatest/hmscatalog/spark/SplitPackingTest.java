package hmscatalog.spark;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.spark.paths.SparkPath;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.junit.AfterClass;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.Test;

/** Splits packed into Spark partitions by Spark's own numbers, each host's splits apart. */
public class SplitPackingTest {
    private static final long MB = 1L << 20;
    private static SparkSession spark;

    @BeforeClass
    public static void start() {
        spark = SparkSession.builder().master("local[2]").appName("SplitPackingTest")
                .config("spark.ui.enabled", "false").getOrCreate();
    }

    @AfterClass
    public static void stop() {
        spark.stop();
    }

    @Before
    public void settings() {
        spark.conf().set("spark.sql.files.openCostInBytes", String.valueOf(4 * MB));
        spark.conf().set("spark.sql.files.maxPartitionBytes", String.valueOf(128 * MB));
        spark.conf().set("spark.sql.files.minPartitionNum", "2");
    }

    private static PartitionedFile split(String name, long length, String... hosts) {
        return new PartitionedFile(InternalRow.empty(), SparkPath.fromPathString("file:/data/" + name), 0, length, hosts,
                0L, length, scala.collection.immutable.Map$.MODULE$.empty());
    }

    private static List<PartitionedFile> splits(int count, long length, String... hosts) {
        List<PartitionedFile> splits = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            splits.add(split("f" + i + "-" + String.join("", hosts), length, hosts));
        }
        return splits;
    }

    @Test
    public void maxSplitBytesFollowsSparksFormula() {
        // 10 splits of 1 MB, each charged 4 MB to open: 50 MB over 2 minimum partitions
        assertEquals(25 * MB, SplitPacking.maxSplitBytes(spark, splits(10, MB)));
        spark.conf().set("spark.sql.files.maxPartitionBytes", String.valueOf(16 * MB));
        assertEquals(16 * MB, SplitPacking.maxSplitBytes(spark, splits(10, MB)));  // capped by maxPartitionBytes
        spark.conf().set("spark.sql.files.minPartitionNum", "1000");
        assertEquals(4 * MB, SplitPacking.maxSplitBytes(spark, splits(10, MB)));  // never below the open cost
    }

    @Test
    public void noSplitsNoPartitions() {
        assertEquals(0, SplitPacking.pack(spark, List.of()).length);
    }

    @Test
    public void smallSplitsShareTasksAndEveryOneIsPackedOnce() {
        FilePartition[] partitions = SplitPacking.pack(spark, splits(10, MB));
        // 25 MB per task at 5 MB per split (open cost included): 5 splits per task
        assertEquals(2, partitions.length);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < partitions.length; i++) {
            assertEquals(i, partitions[i].index());
            for (PartitionedFile file : partitions[i].files()) {
                assertTrue(seen.add(file.filePath().toString()));
            }
        }
        assertEquals(10, seen.size());
    }

    @Test
    public void aSplitBiggerThanTheTargetIsATaskOfItsOwn() {
        List<PartitionedFile> splits = splits(4, MB);
        splits.add(split("big", 200 * MB));
        FilePartition[] partitions = SplitPacking.pack(spark, splits);
        boolean alone = false;
        for (FilePartition partition : partitions) {
            if (partition.files().length == 1 && partition.files()[0].length() == 200 * MB) {
                alone = true;
            }
        }
        assertTrue(alone);
    }

    @Test
    public void splitsOfDifferentHostsNeverShareATask() {
        List<PartitionedFile> splits = new ArrayList<>(splits(3, MB, "a", "b"));
        splits.addAll(splits(3, MB, "b"));
        FilePartition[] partitions = SplitPacking.pack(spark, splits);
        assertEquals(2, partitions.length);  // all six would fit one task, but two hosts make two
        for (FilePartition partition : partitions) {
            Set<String> firstHosts = new HashSet<>();
            for (PartitionedFile file : partition.files()) {
                firstHosts.add(file.locations()[0]);
            }
            assertEquals(1, firstHosts.size());
        }
    }
}
