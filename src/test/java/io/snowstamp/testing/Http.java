package io.snowstamp.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** Plain HTTP calls to an admin server, each bounded by a timeout. */
public final class Http {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private Http() {
    }

    /** One answer. */
    public record Response(int status, String contentType, String body) {
        public JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (Exception e) {
                throw new AssertionError("not JSON (" + e.getMessage() + "): " + body, e);
            }
        }

        @Override
        public String toString() {
            return "HTTP " + status + " " + contentType + "\n" + body;
        }
    }

    public static Response get(String url) {
        return send(url, "GET");
    }

    public static Response send(String url, String method) {
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(15))
                    .method(method, HttpRequest.BodyPublishers.noBody()).build();
            HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
            return new Response(response.statusCode(), response.headers().firstValue("Content-Type").orElse(""), response.body());
        } catch (Exception e) {
            throw new AssertionError(method + " " + url + " failed: " + e, e);
        }
    }

    /** GETs {@code url} every 200 ms until {@code accept} holds; fails with the last answer after {@code timeoutSeconds}. */
    public static Response await(String url, Predicate<Response> accept, long timeoutSeconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        Response last = null;
        while (System.nanoTime() < deadline) {
            try {
                last = get(url);
                if (accept.test(last)) {
                    return last;
                }
            } catch (AssertionError e) {
                last = new Response(-1, "", e.getMessage());
            }
            Thread.sleep(200);
        }
        throw new AssertionError("GET " + url + " did not give the expected answer within " + timeoutSeconds + " s; last: " + last);
    }
}
