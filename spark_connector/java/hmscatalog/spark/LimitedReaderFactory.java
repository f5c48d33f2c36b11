package hmscatalog.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;

import java.io.IOException;
import java.util.function.ToLongFunction;

/**
 * A pushed {@code LIMIT n}: each task stops reading once it has produced n rows (columnar readers after the
 * batch that reaches n), so no task opens files past what the limit can use. Spark still applies the limit
 * across tasks.
 */
final class LimitedReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    private final PartitionReaderFactory inner;
    private final long limit;

    LimitedReaderFactory(PartitionReaderFactory inner, long limit) {
        this.inner = inner;
        this.limit = limit;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        return new Limited<>(inner.createReader(partition), limit, row -> 1);
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
        return new Limited<>(inner.createColumnarReader(partition), limit, ColumnarBatch::numRows);
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
        return inner.supportColumnarReads(partition);
    }

    private static final class Limited<T> implements PartitionReader<T> {
        private final PartitionReader<T> reader;
        private final long limit;
        private final ToLongFunction<T> rows;
        private long produced;

        Limited(PartitionReader<T> reader, long limit, ToLongFunction<T> rows) {
            this.reader = reader;
            this.limit = limit;
            this.rows = rows;
        }

        @Override
        public boolean next() throws IOException {
            if (produced >= limit || !reader.next()) {
                return false;
            }
            produced += rows.applyAsLong(reader.get());
            return true;
        }

        @Override
        public T get() {
            return reader.get();
        }

        @Override
        public void close() throws IOException {
            reader.close();
        }
    }
}
