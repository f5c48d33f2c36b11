package hmscatalog.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Sent to the executors: how a task writes its rows into the job's staging folder. {@code dataOrdinals} and
 * {@code partitionOrdinals} are the positions of the table's data and partition columns in the rows the
 * task receives (the write's schema); partition keys are the metastore's (lower case), in their order.
 */
final class HmsDataWriterFactory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;

    final WriterFormats.Prepared prepared;
    final String staging;
    final String jobId;
    final StructType inputSchema;
    final int[] dataOrdinals;
    final int[] partitionOrdinals;
    final String[] partitionKeys;
    final String timeZone;
    IcebergPartitioning iceberg;  // an Iceberg table's partition spec: its rows go through IcebergFanoutWriter

    HmsDataWriterFactory(WriterFormats.Prepared prepared, String staging, String jobId, StructType inputSchema, int[] dataOrdinals,
                         int[] partitionOrdinals, String[] partitionKeys, String timeZone) {
        this.prepared = prepared;
        this.staging = staging;
        this.jobId = jobId;
        this.inputSchema = inputSchema;
        this.dataOrdinals = dataOrdinals;
        this.partitionOrdinals = partitionOrdinals;
        this.partitionKeys = partitionKeys;
        this.timeZone = timeZone;
    }

    /** The table's data columns, as the files hold them. */
    StructType dataSchema() {
        StructField[] fields = new StructField[dataOrdinals.length];
        for (int i = 0; i < fields.length; i++) {
            fields[i] = inputSchema.fields()[dataOrdinals[i]];
        }
        return new StructType(fields);
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
        if (iceberg != null) {
            return new IcebergFanoutWriter(this, partitionId, taskId);
        }
        return new HmsDataWriter(this, partitionId, taskId);
    }
}
