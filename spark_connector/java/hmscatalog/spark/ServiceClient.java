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

/**
 * Calls to one catalog service (hms-catalog serve) over its REST API.
 *
 * The driver's catalogs hold one each; nothing of it goes to executors, which read split plans only.
 * Errors keep the service's own message (it names the object and the cause) and its status, so a
 * missing table becomes Spark's NoSuchTableException and everything else a ServiceException.
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
        String text;
        try {
            text = JSON.writeValueAsString(body);
        } catch (IOException e) {
            throw new ServiceException(0, "Internal", "cannot encode a request to " + path + ": " + e, e);
        }
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(text)), path, Duration.ofSeconds(600));
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
            }
            throw new ServiceException(response.statusCode(), type, message, null);
        }
        return body;
    }

    /** An error answered by the service, or no answer at all (status 0). */
    static final class ServiceException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        final int status;
        final String type;

        ServiceException(int status, String type, String message, Throwable cause) {
            super(message, cause);
            this.status = status;
            this.type = type;
        }
    }
}
