package hmscatalog.spark;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Spark's Parquet reader over an Iceberg split, with the split's delete files applied: it reads the
 * requested columns plus the equality keys the query did not ask for and the row's position in the file,
 * drops deleted rows, and hands on the requested columns only. Splits without deletes pass through.
 */
final class IcebergDeleteReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    private final PartitionReaderFactory parquet;
    private final Broadcast<SerializableConfiguration> conf;
    private final Map<String, IcebergDeletes.SplitDeletes> deletes;  // by data file, as PartitionedFile encodes its path
    private final StructType innerSchema;  // what the Parquet reader gives: data columns read, then partition columns
    private final int rowIndexOrdinal;
    private final int[] output;
    private final DataType[] outputTypes;

    IcebergDeleteReaderFactory(PartitionReaderFactory parquet, Broadcast<SerializableConfiguration> conf,
                               Map<String, IcebergDeletes.SplitDeletes> deletes, StructType innerDataSchema,
                               int requestedDataColumns, StructType partitionSchema, int rowIndexOrdinal) {
        this.parquet = parquet;
        this.conf = conf;
        this.deletes = deletes;
        List<StructField> inner = new ArrayList<>(Arrays.asList(innerDataSchema.fields()));
        inner.addAll(Arrays.asList(partitionSchema.fields()));
        this.innerSchema = new StructType(inner.toArray(new StructField[0]));
        this.rowIndexOrdinal = rowIndexOrdinal;
        int partitions = partitionSchema.fields().length;
        this.output = new int[requestedDataColumns + partitions];
        this.outputTypes = new DataType[output.length];
        for (int i = 0; i < output.length; i++) {
            output[i] = i < requestedDataColumns ? i : innerDataSchema.fields().length + (i - requestedDataColumns);
            outputTypes[i] = innerSchema.fields()[output[i]].dataType();
        }
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        return FileChainReader.of(partition, this::open);
    }

    /** One split's rows with its deletes applied; Spark's Parquet reader reads it as a partition of its own. */
    private PartitionReader<InternalRow> open(PartitionedFile file) {
        IcebergDeletes.SplitDeletes split = deletes.get(file.urlEncodedPath());
        Configuration hadoop = conf.value().value();
        Set<Long> positions;
        List<Set<List<Object>>> keySets = new ArrayList<>();
        List<int[]> keyOrdinals = new ArrayList<>();
        try {
            positions = split == null ? Set.of() : IcebergDeletes.positions(split.files(), split.dataPath(), hadoop);
            for (IcebergDeletes.DeleteFile deleteFile : split == null ? List.<IcebergDeletes.DeleteFile>of() : split.files()) {
                if (deleteFile.positional()) {
                    continue;
                }
                int[] ordinals = new int[deleteFile.columns().length];
                for (int i = 0; i < ordinals.length; i++) {
                    ordinals[i] = innerSchema.fieldIndex(deleteFile.columns()[i]);
                }
                keySets.add(IcebergDeletes.keys(deleteFile, hadoop));
                keyOrdinals.add(ordinals);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the delete files of " + (split == null ? file.urlEncodedPath() : split.dataPath())
                    + ": " + e, e);
        }
        PartitionReader<InternalRow> rows = parquet.createReader(new FilePartition(0, new PartitionedFile[] {file}));
        return new PartitionReader<>() {
            private final GenericInternalRow out = new GenericInternalRow(output.length);

            @Override
            public boolean next() throws IOException {
                while (rows.next()) {
                    InternalRow row = rows.get();
                    if (!positions.isEmpty() && positions.contains(row.getLong(rowIndexOrdinal))) {
                        continue;
                    }
                    if (deletedByEquality(row)) {
                        continue;
                    }
                    for (int i = 0; i < output.length; i++) {
                        out.update(i, row.isNullAt(output[i]) ? null : row.get(output[i], outputTypes[i]));
                    }
                    return true;
                }
                return false;
            }

            private boolean deletedByEquality(InternalRow row) {
                for (int d = 0; d < keySets.size(); d++) {
                    int[] ordinals = keyOrdinals.get(d);
                    Object[] key = new Object[ordinals.length];
                    for (int i = 0; i < ordinals.length; i++) {
                        key[i] = IcebergDeletes.rowValue(row, ordinals[i], innerSchema.fields()[ordinals[i]].dataType());
                    }
                    if (keySets.get(d).contains(Arrays.asList(key))) {
                        return true;
                    }
                }
                return false;
            }

            @Override
            public InternalRow get() {
                return out;
            }

            @Override
            public void close() throws IOException {
                rows.close();
            }
        };
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
        return false;
    }
}
