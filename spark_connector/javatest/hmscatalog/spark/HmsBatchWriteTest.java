package hmscatalog.spark;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * A write's job begins at the service only when Spark asks the driver for the writer factory: building the
 * write sends nothing, a refused begin fails there (before any task), and an abort before the job began
 * has nothing to delete.
 */
public class HmsBatchWriteTest {
    private HttpServer server;
    private final List<String> requests = new CopyOnWriteArrayList<>();

    @Before
    public void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath());
            byte[] body = "{\"error\": {\"code\": 403, \"type\": \"Forbidden\", \"message\": \"this token may only read\"}}"
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(403, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
    }

    @After
    public void stop() {
        server.stop(0);
    }

    private HmsBatchWrite write() {
        ServiceClient client = new ServiceClient("http://127.0.0.1:" + server.getAddress().getPort(), "read-only");
        WriteDestination destination = new WriteDestination(client, "/v1/catalogs/c", "/v1/catalogs/c/databases/d/tables/t/writes",
                null, "c.d.t", new String[0], null, () -> { }, job -> StorageSettings.NONE);
        return new HmsBatchWrite(destination, null, WriteRequest.append(), null);
    }

    @Test
    public void buildingTheWriteSendsNothing() {
        HmsBatchWrite write = write();
        assertEquals(List.of(), requests);
        write.abort(new org.apache.spark.sql.connector.write.WriterCommitMessage[0]);
        assertEquals(List.of(), requests);  // no job began, so none to delete
    }

    @Test
    public void aRefusedBeginFailsTheWriterFactoryAndLeavesNoJob() {
        HmsBatchWrite write = write();
        RuntimeException refused = assertThrows(RuntimeException.class, () -> write.createBatchWriterFactory(null));
        assertEquals(true, refused.getMessage().contains("this token may only read"));
        assertEquals(List.of("POST /v1/catalogs/c/databases/d/tables/t/writes"), requests);
        write.abort(new org.apache.spark.sql.connector.write.WriterCommitMessage[0]);
        assertEquals(1, requests.size());
    }
}
