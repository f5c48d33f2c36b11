package hmscatalog.spark;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.Test;

/** The service's bodies as the connector decodes and encodes them, and the plan's format version. */
public class ServiceBodiesTest {
    private static JsonNode json(String text) {
        try {
            return ServiceClient.JSON.readTree(text.replace('\'', '"'));
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Test
    public void aPlanOfTheKnownFormatPasses() {
        JsonNode plan = json("{'format_version': 1, 'splits': []}");
        assertSame(plan, ServiceBodies.checkedPlan(plan, "db.t"));
    }

    @Test
    public void aPlanOfAnotherFormatIsRefusedNamingBothVersions() {
        IllegalStateException newer = assertThrows(IllegalStateException.class,
                () -> ServiceBodies.checkedPlan(json("{'format_version': 2, 'splits': []}"), "db.t"));
        assertTrue(newer.getMessage(), newer.getMessage().contains("db.t has format version 2"));
        assertTrue(newer.getMessage(), newer.getMessage().contains("reads format version 1"));
        IllegalStateException none = assertThrows(IllegalStateException.class,
                () -> ServiceBodies.checkedPlan(json("{'splits': []}"), "db.t"));
        assertTrue(none.getMessage(), none.getMessage().contains("format version none"));
        assertThrows(IllegalStateException.class, () -> ServiceBodies.checkedPlan(json("{'format_version': '1'}"), "db.t"));
    }

    @Test
    public void aBegunJobIsDecodedOnce() {
        ServiceBodies.BegunJob job = ServiceBodies.BegunJob.of(json("{'job': 'j1', 'staging': 'file:/w/t/.s', 'target': "
                + "{'partition_keys': ['dt', 'H'], 'keep_partition_columns': true, 'iceberg': true, "
                + "'iceberg_field_ids': {'id': {'id': 1}}, 'format': 'parquet', 'iceberg_partition': ["
                + "{'name': 'ts_day', 'source': 'ts', 'transform': 'day'},"
                + "{'name': 'id_bucket', 'source': 'id', 'transform': 'bucket', 'width': 16}]}}"), "c.d.t");
        assertEquals("j1", job.job());
        assertEquals("file:/w/t/.s", job.staging());
        assertEquals(List.of("dt", "H"), job.target().partitionKeys());
        assertTrue(job.target().keepPartitionColumns());
        assertTrue(job.target().iceberg());
        assertEquals(1, job.target().icebergFieldIds().path("id").path("id").asInt());
        assertEquals("parquet", job.target().raw().path("format").asText());
        assertEquals(List.of(new ServiceBodies.IcebergField("ts_day", "ts", "day", 0),
                new ServiceBodies.IcebergField("id_bucket", "id", "bucket", 16)), job.target().icebergPartition());
        ServiceBodies.BegunJob plain = ServiceBodies.BegunJob.of(json("{'job': 'j2', 'staging': 's', 'target': {}}"), "c.d.t");
        assertEquals(List.of(), plain.target().partitionKeys());
        assertFalse(plain.target().keepPartitionColumns());
        assertFalse(plain.target().iceberg());
        assertEquals(List.of(), plain.target().icebergPartition());
    }

    @Test
    public void aBegunJobWithoutItsFieldsIsRefused() {
        IllegalStateException error = assertThrows(IllegalStateException.class,
                () -> ServiceBodies.BegunJob.of(json("{'staging': 's', 'target': {}}"), "c.d.t"));
        assertTrue(error.getMessage(), error.getMessage().contains("c.d.t"));
        assertThrows(IllegalStateException.class, () -> ServiceBodies.BegunJob.of(json("{'job': 'j', 'staging': 's'}"), "c.d.t"));
    }

    @Test
    public void theCommitBodyCarriesModeSpecAndFiles() {
        Map<String, String> spec = new LinkedHashMap<>();
        spec.put("dt", "k=v");
        spec.put("h", null);
        ObjectNode body = ServiceBodies.commitBody(new WriteRequest(WriteRequest.OVERWRITE, spec), List.of(
                new WrittenFiles.File("dt=k%3Dv/h=__HIVE_DEFAULT_PARTITION__/part-0", Arrays.asList("k=v", null), 3, 120)));
        assertEquals(json("{'mode': 'overwrite', 'static': {'dt': 'k=v', 'h': null}, 'files': [{'path': "
                + "'dt=k%3Dv/h=__HIVE_DEFAULT_PARTITION__/part-0', 'rows': 3, 'bytes': 120, 'values': ['k=v', null]}]}").toString(), body.toString());
        assertEquals(List.of("dt", "h"), List.copyOf(spec.keySet()));
    }

    @Test
    public void aWriteRequestIsFixedWhenBuilt() {
        Map<String, String> spec = new LinkedHashMap<>();
        spec.put("dt", "x");
        WriteRequest request = new WriteRequest(WriteRequest.OVERWRITE, spec);
        spec.clear();  // the builder changing afterwards does not reach the built write
        assertEquals(Map.of("dt", "x"), request.staticSpec());
        assertThrows(UnsupportedOperationException.class, () -> request.staticSpec().put("h", "1"));
        assertThrows(IllegalArgumentException.class, () -> new WriteRequest("upsert", Map.of()));
        assertEquals(WriteRequest.APPEND, WriteRequest.append().mode());
    }
}
