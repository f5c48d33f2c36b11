package hmscatalog.spark;

import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.distributions.Distributions;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;

/**
 * A write asks Spark for rows sorted by the table's partition columns within each task (no shuffle), as
 * Spark's own insert into a partitioned table sorts them, so a task writes one partition's file at a time.
 * The partition columns are those of the write's destination, known once the job has begun; they are read
 * from the write's schema here as the table's partitioning says.
 */
final class HmsWrite implements RequiresDistributionAndOrdering {
    private final WriteDestination destination;
    private final LogicalWriteInfo info;
    private final WriteRequest request;
    private final StagedHmsTable staged;

    HmsWrite(WriteDestination destination, LogicalWriteInfo info, WriteRequest request, StagedHmsTable staged) {
        this.destination = destination;
        this.info = info;
        this.request = request;
        this.staged = staged;
    }

    @Override
    public Distribution requiredDistribution() {
        return Distributions.unspecified();
    }

    @Override
    public SortOrder[] requiredOrdering() {
        String[] keys = partitionColumns();
        SortOrder[] ordering = new SortOrder[keys.length];
        for (int i = 0; i < keys.length; i++) {
            ordering[i] = Expressions.sort(Expressions.column(keys[i]), SortDirection.ASCENDING);
        }
        return ordering;
    }

    private String[] partitionColumns() {
        return destination.partitionColumns();
    }

    @Override
    public String description() {
        return "hms-catalog write to " + destination.name() + " (" + request.mode() + ")";
    }

    @Override
    public BatchWrite toBatch() {
        return new HmsBatchWrite(destination, info, request, staged);
    }
}
