package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.Serializable;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

/**
 * Calls to one catalog service (hms-catalog serve) over its REST API.
 *
 * The driver's catalogs hold one each; nothing of it goes to executors, which read split plans only.
 * Reads are GETs and plan POSTs; DDL is POST, PATCH and DELETE on databases, tables and partitions.
 * Errors keep the service's own message (it names the object and the cause), its status and what was
 * missing or exists ({@code kind}), so a missing table becomes Spark's NoSuchTableException and
 * everything else a ServiceException; a refused token's message says permission denied and what the
 * token may do.
 */
final class ServiceClient implements Serializable {
    private static final long serialVersionUID = 1L;

    static final ObjectMapper JSON = new ObjectMapper();

    private final String baseUrl;
    private final String token;
    private transient HttpClient http;

    ServiceClient(String url, String token) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("the catalog service URL is not set (spark.hmscatalog.uri, or the catalog's 'uri' option)");
        }
        String trimmed = url.strip();
        while (trimmed.endsWith("/")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        if (!trimmed.startsWith("http://") && !trimmed.startsWith("https://")) {
            throw new IllegalArgumentException("the catalog service URL must start with http:// or https://, got '" + url + "'");
        }
        this.baseUrl = trimmed;
        this.token = token == null || token.isBlank() ? null : token.strip();
    }

    String url() {
        return baseUrl;
    }

    static String segment(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    JsonNode get(String path) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).GET(), path, Duration.ofSeconds(120));
    }

    JsonNode get(String path, Duration timeout) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).GET(), path, timeout);
    }

    JsonNode post(String path, ObjectNode body) {
        return send(withBody(path, "POST", body), path, Duration.ofSeconds(600));
    }

    JsonNode patch(String path, ObjectNode body) {
        return send(withBody(path, "PATCH", body), path, Duration.ofSeconds(600));
    }

    JsonNode delete(String path) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).DELETE(), path, Duration.ofSeconds(600));
    }

    private HttpRequest.Builder withBody(String path, String method, ObjectNode body) {
        String text;
        try {
            text = JSON.writeValueAsString(body);
        } catch (IOException e) {
            throw new ServiceException(0, "Internal", "cannot encode a request to " + path + ": " + e, e);
        }
        return HttpRequest.newBuilder(URI.create(baseUrl + path))
                .header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(text));
    }

    private synchronized HttpClient http() {
        if (http == null) {
            http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10)).build();
        }
        return http;
    }

    private JsonNode send(HttpRequest.Builder request, String path, Duration timeout) {
        request.timeout(timeout).header("Accept", "application/json");
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> response;
        try {
            response = http().send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new ServiceException(0, "ServiceUnavailable",
                    "the catalog service at " + baseUrl + " did not answer " + path + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServiceException(0, "Interrupted", "interrupted while calling " + baseUrl + path, e);
        }
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
