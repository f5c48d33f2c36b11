package hmscatalog.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The table of a CREATE [OR REPLACE] TABLE .. AS SELECT (and {@code writeTo(..).create()/createOrReplace()})
 * while its query runs: nothing exists in the metastore yet. The query's files go to a staging folder
 * under the new table's folder; {@code commitStagedChanges} (after the query succeeded) has the service
 * create or replace the table with them in one commit, {@code abortStagedChanges} has it delete them, so a
 * failing query leaves no table, no folder, and a replaced table as it was.
 */
final class StagedHmsTable implements StagedTable, SupportsWrite {
    private final String name;
    private final Column[] columns;
    private final Transform[] partitioning;
    private final Map<String, String> properties;
    private final WriteDestination destination;
    private HmsBatchWrite batch;
    private ObjectNode commitBody;

    StagedHmsTable(String name, Column[] columns, Transform[] partitioning, Map<String, String> properties, WriteDestination destination) {
        this.name = name;
        this.columns = columns;
        this.partitioning = partitioning;
        this.properties = properties;
        this.destination = destination;
    }

    /** The columns of identity partitioning (a Hive or data source table's partition columns). */
    static String[] partitionColumns(Transform[] partitions) {
        List<String> keys = new ArrayList<>();
        for (Transform transform : partitions) {
            if (transform.references().length == 1) {
                keys.add(String.join(".", transform.references()[0].fieldNames()));
            }
        }
        return keys.toArray(new String[0]);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Column[] columns() {
        return columns;
    }

    @Override
    public Transform[] partitioning() {
        return partitioning;
    }

    @Override
    public Map<String, String> properties() {
        return properties;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        return new HmsWriteBuilder(destination, info, this);
    }

    void begun(HmsBatchWrite write) {
        this.batch = write;
    }

    void ready(ObjectNode body) {
        this.commitBody = body;
    }

    @Override
    public void commitStagedChanges() {
        if (batch == null || commitBody == null) {
            throw new IllegalStateException("table " + name + " has no written data to commit: its query did not run to the end");
        }
        batch.commitNow(commitBody);
    }

    @Override
    public void abortStagedChanges() {
        if (batch != null) {
            batch.abortJob();
        }
    }
}
