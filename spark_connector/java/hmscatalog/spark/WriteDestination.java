package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.spark.sql.types.StructType;

import java.util.function.Function;

/**
 * Where a write goes, in the service's API: an existing table ({@code POST .../tables/t/writes}) or the
 * table a CREATE [OR REPLACE] TABLE .. AS SELECT makes ({@code POST .../databases/d/writes} with its
 * definition). {@code tableSchema}: the table's Spark schema, whose field metadata the files keep (Iceberg's
 * field ids); null for a new table. {@code afterCommit} drops the driver's view and plans of the table, so its next query reads
 * the new files without REFRESH. {@code storage}: the storage settings for a job that began (its id given), which the
 * write's tasks get as Hadoop settings: a role's session scoped to the table, or for a new table to the job's folder.
 */
record WriteDestination(ServiceClient client, String catalogPath, String beginPath, ObjectNode beginBody, String name,
                        String[] partitionColumns, StructType tableSchema, Runnable afterCommit,
                        Function<String, StorageSettings> storage) {

    JsonNode begin() {
        return client.post(beginPath, beginBody == null ? ServiceClient.JSON.createObjectNode() : beginBody);
    }

    JsonNode commit(String job, ObjectNode body) {
        try {
            return client.post(jobPath(job) + "/commit", body);
        } finally {
            afterCommit.run();
        }
    }

    void renew(String job) {
        client.post(jobPath(job) + "/alive", ServiceClient.JSON.createObjectNode());
    }

    void abort(String job) {
        client.delete(jobPath(job));
    }

    private String jobPath(String job) {
        return catalogPath + "/writes/" + ServiceClient.segment(job);
    }
}
