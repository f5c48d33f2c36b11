package hmscatalog.spark;

import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.PartitionedFile;

import java.io.IOException;
import java.util.function.Function;

/**
 * The rows of every split of one Spark partition, one split after the other, for the readers that read one
 * split at a time (Hive serdes, Iceberg deletes). Each split's reader is opened when the previous one is
 * done and closed before the next opens, so a task holds one open file, and {@code input_file_name()}
 * names the split being read, as with Spark's own file readers.
 */
final class FileChainReader<T> implements PartitionReader<T> {
    private final PartitionedFile[] files;
    private final Function<PartitionedFile, PartitionReader<T>> open;
    private int next;
    private PartitionReader<T> current;

    private FileChainReader(PartitionedFile[] files, Function<PartitionedFile, PartitionReader<T>> open) {
        this.files = files;
        this.open = open;
    }

    static <T> PartitionReader<T> of(InputPartition partition, Function<PartitionedFile, PartitionReader<T>> open) {
        return new FileChainReader<>(((FilePartition) partition).files(), open);
    }

    @Override
    public boolean next() throws IOException {
        while (true) {
            if (current == null) {
                if (next >= files.length) {
                    return false;
                }
                PartitionedFile file = files[next++];
                InputFileBlockHolder.set(file.urlEncodedPath(), file.start(), file.length());
                current = open.apply(file);
            }
            if (current.next()) {
                return true;
            }
            current.close();
            current = null;
        }
    }

    @Override
    public T get() {
        return current.get();
    }

    @Override
    public void close() throws IOException {
        if (current != null) {
            current.close();
            current = null;
        }
        InputFileBlockHolder.unset();
    }
}
