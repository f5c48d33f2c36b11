package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;

/**
 * The service's JSON bodies of the write path, and the split plan's version, decoded and encoded in this
 * one place: a field renamed at the service then breaks one decoder with a message naming it, instead of
 * reading as a silent default in whichever class happened to look it up.
 */
final class ServiceBodies {
    /** The split plan format this connector reads: {@code PLAN_FORMAT_VERSION} of the planner's plan.py. */
    static final int PLAN_FORMAT_VERSION = 1;

    private ServiceBodies() {
    }

    /** The plan as the service sent it, once its {@code format_version} is the one this connector reads. */
    static JsonNode checkedPlan(JsonNode plan, String table) {
        JsonNode version = plan.path("format_version");
        if (!version.isIntegralNumber() || version.asLong() != PLAN_FORMAT_VERSION) {
            String sent = version.isMissingNode() || version.isNull() ? "none" : version.toString();
            throw new IllegalStateException("the catalog service's split plan of " + table + " has format version " + sent
                    + ", and this connector reads format version " + PLAN_FORMAT_VERSION
                    + ": use the connector jar of the service's release (spark_connector.connector_jar())");
        }
        return plan;
    }

    /**
     * Where a job's files go and what they must be ({@code target} of the begin answer): the partition keys
     * (in the folders' order), whether the data files keep them (Iceberg's do), whether the table is
     * Iceberg, Iceberg's field ids by column. {@code raw} goes on to the writer formats and Iceberg's
     * partitioning, which read the format's own fields.
     */
    record WriteTarget(List<String> partitionKeys, boolean keepPartitionColumns, boolean iceberg, JsonNode icebergFieldIds,
                       List<IcebergField> icebergPartition, JsonNode raw) {
    }

    /**
     * One field of an Iceberg table's partition spec as a write target names it ({@code iceberg_partition}):
     * the field's name, its source column, the transform ({@code identity}, {@code year} .. {@code hour},
     * {@code bucket}, {@code truncate}, {@code void}) and the bucket count or truncate width (0 for others).
     */
    record IcebergField(String name, String source, String transform, int width) {
    }

    /** The {@code iceberg_partition} fields of a write target (none for a table of another format). */
    static List<IcebergField> icebergPartition(JsonNode target) {
        List<IcebergField> fields = new ArrayList<>();
        for (JsonNode field : target.path("iceberg_partition")) {
            fields.add(new IcebergField(field.path("name").asText(), field.path("source").asText(), field.path("transform").asText(),
                    field.path("width").asInt(0)));
        }
        return List.copyOf(fields);
    }

    /** The answer to beginning a write job ({@code POST .../writes}). */
    record BegunJob(String job, String staging, WriteTarget target) {
        static BegunJob of(JsonNode answer, String table) {
            String job = answer.path("job").asText("");
            String staging = answer.path("staging").asText("");
            JsonNode target = answer.path("target");
            if (job.isEmpty() || staging.isEmpty() || !target.isObject()) {
                throw new IllegalStateException("the catalog service began a write to " + table
                        + " without naming its job, staging folder and target: " + answer);
            }
            List<String> keys = new ArrayList<>();
            target.path("partition_keys").forEach(key -> keys.add(key.asText()));
            return new BegunJob(job, staging, new WriteTarget(List.copyOf(keys), target.path("keep_partition_columns").asBoolean(false),
                    target.path("iceberg").asBoolean(false), target.path("iceberg_field_ids"), icebergPartition(target), target));
        }
    }

    /** The body committing a job: the request's mode and static spec, and every committed task's files. */
    static ObjectNode commitBody(WriteRequest request, List<WrittenFiles.File> files) {
        ObjectNode body = ServiceClient.JSON.createObjectNode().put("mode", request.mode());
        ObjectNode statics = body.putObject("static");
        request.staticSpec().forEach(statics::put);
        ArrayNode entries = body.putArray("files");
        for (WrittenFiles.File file : files) {
            ObjectNode entry = entries.addObject().put("path", file.path()).put("rows", file.rows()).put("bytes", file.bytes());
            ArrayNode values = entry.putArray("values");
            file.values().forEach(values::add);
        }
        return body;
    }
}
