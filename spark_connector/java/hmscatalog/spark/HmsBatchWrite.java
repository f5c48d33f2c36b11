package hmscatalog.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One write job. It begins at the service when Spark asks the driver for the writer factory, before any
 * task runs (a token that may not write is refused there, and a table that takes no writes says why), runs
 * Spark's writers in the tasks, and commits by sending the service the committed tasks' files: the service
 * swaps them in as one catalog event. An aborted job asks the service to delete what it wrote. A CREATE
 * TABLE AS keeps its commit for the staged table's {@code commitStagedChanges}, so the table appears with
 * its data only once the query succeeded. Constructing one only stores state: Spark may build a write it
 * never runs, and a job begun for it would stay open at the service until taken for dead.
 */
final class HmsBatchWrite implements BatchWrite {
    private final WriteDestination destination;
    private final LogicalWriteInfo info;
    private final WriteRequest request;
    private final StagedHmsTable staged;
    /** Set once the job has begun at the service (see {@link #begin}). */
    private ServiceBodies.BegunJob begun;
    private volatile boolean ended;
    private Thread renewer;

    HmsBatchWrite(WriteDestination destination, LogicalWriteInfo info, WriteRequest request, StagedHmsTable staged) {
        this.destination = destination;
        this.info = info;
        this.request = request;
        this.staged = staged;
    }

    /** Begins the job at the service (once) and starts renewing it: the driver's first step of the write. */
    private synchronized ServiceBodies.BegunJob begin() {
        if (begun != null) {
            return begun;
        }
        begun = ServiceBodies.BegunJob.of(destination.begin(), destination.name());
        if (staged != null) {
            staged.begun(this);
        }
        String job = begun.job();
        this.renewer = new Thread(() -> renewWhileRunning(job), "hms-catalog-write-" + job);
        renewer.setDaemon(true);
        renewer.start();
        return begun;
    }

    /** Whether the job has begun at the service (an abort before then has nothing to delete). */
    private synchronized ServiceBodies.BegunJob begunJob() {
        return begun;
    }

    /** Tells the service every 5 s that this driver lives: a job it stops hearing of is taken for dead. */
    private void renewWhileRunning(String job) {
        while (!ended) {
            try {
                Thread.sleep(5_000L);
                if (!ended) {
                    destination.renew(job);
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                // the commit will say what is wrong with the service
            }
        }
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo physical) {
        ServiceBodies.BegunJob job = begin();
        ServiceBodies.WriteTarget target = job.target();
        StructType schema = info.schema();
        List<String> keys = target.partitionKeys();
        int[] partitionOrdinals = new int[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            partitionOrdinals[i] = ordinal(schema, keys.get(i));
        }
        boolean keepKeys = target.keepPartitionColumns();  // Iceberg data files hold them
        List<Integer> data = new ArrayList<>();
        for (int i = 0; i < schema.fields().length; i++) {
            if (keepKeys || !keys.contains(schema.fields()[i].name().toLowerCase(Locale.ROOT))) {
                data.add(i);
            }
        }
        int[] dataOrdinals = data.stream().mapToInt(Integer::intValue).toArray();
        StructField[] dataFields = new StructField[dataOrdinals.length];
        for (int i = 0; i < dataOrdinals.length; i++) {
            dataFields[i] = tableField(schema.fields()[dataOrdinals[i]]);
        }
        boolean iceberg = target.iceberg();
        if (iceberg) {
            dataFields = IcebergPartitioning.withFieldIds(dataFields, target.icebergFieldIds());
        }
        WriterFormats.Prepared prepared = WriterFormats.prepare(target.raw(), job.staging(), new StructType(dataFields),
                destination.storage().apply(job.job()));
        HmsDataWriterFactory factory = new HmsDataWriterFactory(prepared, job.staging(), job.job(), schema, dataOrdinals, partitionOrdinals,
                keys.toArray(new String[0]), SQLConf.get().sessionLocalTimeZone());
        if (iceberg) {
            IcebergPartitioning.adaptConf(prepared);
            factory.iceberg = IcebergPartitioning.of(target.icebergPartition(), schema, destination.name());
        }
        return factory;
    }

    /** The table's own field of that name where it has one of the same type: its metadata carries Iceberg's
     * field ids ({@code parquet.field.id}, nested fields' too), which Spark's Parquet writer then writes. */
    private StructField tableField(StructField written) {
        StructType table = destination.tableSchema();
        if (table != null) {
            for (StructField field : table.fields()) {
                if (field.name().equalsIgnoreCase(written.name())
                        && field.dataType().sameType(written.dataType())) {
                    return new StructField(written.name(), field.dataType(), written.nullable(), field.metadata());
                }
            }
        }
        return written;
    }

    private int ordinal(StructType schema, String key) {
        for (int i = 0; i < schema.fields().length; i++) {
            if (schema.fields()[i].name().equalsIgnoreCase(key)) {
                return i;
            }
        }
        throw new IllegalStateException("the rows written to " + destination.name() + " have no column '" + key
                + "', one of its partition columns (columns: " + String.join(", ", schema.fieldNames()) + ")");
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
        List<WrittenFiles.File> files = new ArrayList<>();
        for (WriterCommitMessage message : messages) {
            if (message instanceof WrittenFiles written) {
                files.addAll(written.files());
            }
        }
        ObjectNode body = ServiceBodies.commitBody(request, files);
        if (staged != null) {
            staged.ready(body);
        } else {
            commitNow(body);
        }
    }

    /** Sends the files to the service, which makes them the table's; the job has ended whatever happens. */
    void commitNow(ObjectNode body) {
        ServiceBodies.BegunJob job = begunJob();
        if (job == null) {
            throw new IllegalStateException("the write to " + destination.name() + " commits a job that never began");
        }
        try {
            destination.commit(job.job(), body);
        } finally {
            ended = true;
            renewer.interrupt();
        }
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
        abortJob();
    }

    /** Asks the service to delete what the job wrote (once); a failure to is left to the next write's clean-up. */
    void abortJob() {
        if (ended) {
            return;
        }
        ended = true;
        ServiceBodies.BegunJob job = begunJob();
        if (job == null) {
            return;
        }
        renewer.interrupt();
        try {
            destination.abort(job.job());
        } catch (RuntimeException e) {
            // the job's staging folder goes with the table's next write, or ALTER TABLE .. RECOVER PARTITIONS
        }
    }
}
