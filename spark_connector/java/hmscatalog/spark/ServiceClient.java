package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.Serializable;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import javax.net.ssl.SSLHandshakeException;

/**
 * Calls to one catalog service (hms-catalog serve) over its REST API.
 *
 * The driver's catalogs hold one each; nothing of it goes to executors, which read split plans only.
 * Reads are GETs and plan POSTs; DDL is POST, PATCH and DELETE on databases, tables and partitions.
 * Errors keep the service's own message (it names the object and the cause), its status and what was
 * missing or exists ({@code kind}), so a missing table becomes Spark's NoSuchTableException and
 * everything else a ServiceException; a refused token's message says permission denied and what the
 * token may do.
 *
 * The URL may name several replicas of the service over one shared store, comma-separated. Requests go
 * to the one that answered last and on to the next when it cannot be reached or answers 503, as the
 * Python client does: a GET (the change feed's long poll too: its version means the same change on every
 * replica) also when the connection died before the answer; a POST, PATCH or DELETE only when no
 * connection was opened or on 503, since once sent the server may have acted on it and sending it again
 * could apply it twice.
 */
final class ServiceClient implements Serializable {
    private static final long serialVersionUID = 1L;

    static final ObjectMapper JSON = new ObjectMapper();

    private final List<String> baseUrls;
    private final String token;
    private volatile int current;  // the replica that answered last: asked first
    private transient HttpClient http;

    ServiceClient(String url, String token) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("the catalog service URL is not set (spark.hmscatalog.uri, or the catalog's 'uri' option)");
        }
        List<String> urls = new ArrayList<>();
        for (String piece : url.split(",")) {
            String trimmed = piece.strip();
            while (trimmed.endsWith("/")) {
                trimmed = trimmed.substring(0, trimmed.length() - 1);
            }
            if (trimmed.isEmpty() || urls.contains(trimmed)) {
                continue;
            }
            if (!trimmed.startsWith("http://") && !trimmed.startsWith("https://")) {
                throw new IllegalArgumentException("the catalog service URL must start with http:// or https://, got '" + piece.strip() + "'");
            }
            urls.add(trimmed);
        }
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("the catalog service URL is not set (spark.hmscatalog.uri, or the catalog's 'uri' option), got '" + url + "'");
        }
        this.baseUrls = List.copyOf(urls);
        this.token = token == null || token.isBlank() ? null : token.strip();
    }

    /** The URL requests go to first: the replica that answered last. */
    String url() {
        return baseUrls.get(current);
    }

    /** Every replica's URL, comma-separated, as the configuration gives them. */
    String urls() {
        return String.join(",", baseUrls);
    }

    static String segment(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    JsonNode get(String path) {
        return send("GET", path, null, Duration.ofSeconds(120));
    }

    JsonNode get(String path, Duration timeout) {
        return send("GET", path, null, timeout);
    }

    JsonNode post(String path, ObjectNode body) {
        return send("POST", path, encode(path, body), Duration.ofSeconds(600));
    }

    JsonNode patch(String path, ObjectNode body) {
        return send("PATCH", path, encode(path, body), Duration.ofSeconds(600));
    }

    JsonNode delete(String path) {
        return send("DELETE", path, null, Duration.ofSeconds(600));
    }

    private static String encode(String path, ObjectNode body) {
        try {
            return JSON.writeValueAsString(body);
        } catch (IOException e) {
            throw new ServiceException(0, "Internal", "cannot encode a request to " + path + ": " + e, e);
        }
    }

    private synchronized HttpClient http() {
        if (http == null) {
            http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10)).build();
        }
        return http;
    }

    private HttpRequest request(String baseUrl, String method, String path, String body, Duration timeout) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(timeout)
                .header("Accept", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return request.build();
    }

    /** The first answer other than 503, from the replicas in turn starting at the current one. */
    private JsonNode send(String method, String path, String body, Duration timeout) {
        List<String> failures = new ArrayList<>();
        HttpResponse<String> refused = null;  // the last 503: what to raise when every replica answered one
        String refusedBy = null;
        boolean everyRefused = true;
        int start = current;
        for (int step = 0; step < baseUrls.size(); step++) {
            int index = (start + step) % baseUrls.size();
            String baseUrl = baseUrls.get(index);
            HttpResponse<String> response;
            try {
                response = http().send(request(baseUrl, method, path, body, timeout), HttpResponse.BodyHandlers.ofString());
            } catch (ConnectException | HttpConnectTimeoutException | SSLHandshakeException e) {
                failures.add(baseUrl + " cannot be reached: " + e);  // nothing was sent: any request may go on
                everyRefused = false;
                continue;
            } catch (HttpTimeoutException e) {
                throw new ServiceException(0, "ServiceUnavailable",
                        "the catalog service at " + baseUrl + " did not answer " + method + " " + path + " in time: " + e, e);
            } catch (IOException e) {
                failures.add(baseUrl + " closed the connection: " + e);
                everyRefused = false;
                if (method.equals("GET")) {
                    continue;
                }
                throw new ServiceException(0, "ServiceUnavailable",
                        failed(failures, method, path) + " (it may have been applied, so it was not sent again)", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ServiceException(0, "Interrupted", "interrupted while calling " + baseUrl + path, e);
            }
            if (response.statusCode() == 503) {
                failures.add(baseUrl + " answered 503: " + response.body());
                refused = response;
                refusedBy = baseUrl;
                continue;
            }
            current = index;
            return answer(baseUrl, path, response);
        }
        if (everyRefused && refused != null) {
            return answer(refusedBy, path, refused);
        }
        throw new ServiceException(0, "ServiceUnavailable", failed(failures, method, path), null);
    }

    private String failed(List<String> failures, String method, String path) {
        if (failures.size() == 1) {
            return "the catalog service at " + failures.get(0) + " (" + method + " " + path + ")";
        }
        return "no replica of the catalog service answered " + method + " " + path + ": " + String.join("; ", failures);
    }

    private static JsonNode answer(String baseUrl, String path, HttpResponse<String> response) {
        JsonNode body;
        try {
            body = response.body().isEmpty() ? JSON.createObjectNode() : JSON.readTree(response.body());
        } catch (IOException e) {
            throw new ServiceException(response.statusCode(), "BadAnswer",
                    baseUrl + path + " answered " + response.statusCode() + " with a body that is not JSON", e);
        }
        if (response.statusCode() >= 400) {
            JsonNode error = body.path("error");
            String type = error.path("type").asText("Error");
            String message = error.path("message").asText(response.body());
            if (response.statusCode() == 401) {
                message = "the catalog service at " + baseUrl + " refused the token (set spark.hmscatalog.token "
                        + "or the catalog's 'token' option): " + message;
            } else if (response.statusCode() == 403) {
                // the service's message says what the token may do; its fields say it again for the record
                String said = message.toLowerCase(Locale.ROOT).startsWith("permission denied") ? message
                        : "permission denied: " + message;
                message = said + limits(error) + " (catalog service at " + baseUrl + ")";
            }
            throw new ServiceException(response.statusCode(), type, message, error.path("kind").asText(null), null);
        }
        return body;
    }

    /** The token's limits a refusal names besides its message (its name, access, catalogs), as " (key: value, ...)". */
    private static String limits(JsonNode error) {
        StringBuilder limits = new StringBuilder();
        error.properties().forEach(field -> {
            if (!field.getKey().equals("type") && !field.getKey().equals("message")) {
                JsonNode value = field.getValue();
                limits.append(limits.length() == 0 ? " (" : ", ").append(field.getKey()).append(": ")
                        .append(value.isValueNode() ? value.asText() : value.toString());
            }
        });
        return limits.length() == 0 ? "" : limits.append(")").toString();
    }

    /** An error answered by the service, or no answer at all (status 0); {@code kind} is what was not found
     * or exists already ("database", "table", "partition"), when the service says. */
    static final class ServiceException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        final int status;
        final String type;
        final String kind;

        ServiceException(int status, String type, String message, Throwable cause) {
            this(status, type, message, null, cause);
        }

        ServiceException(int status, String type, String message, String kind, Throwable cause) {
            super(message, cause);
            this.status = status;
            this.type = type;
            this.kind = kind;
        }
    }
}
