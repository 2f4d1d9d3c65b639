package io.snowstamp.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConfigException;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SchemaRegistrySettings;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The Confluent schema registry API over {@code java.net.http} (schema-registry.md says why not a
 * registry vendor's client). Several URLs are tried in order, starting with the last that answered.
 * What a failure means is decided here: an unknown ID or a refused schema is the record's
 * ({@link BadRecordException}); no answer, 5xx, 408 and 429 are an outage
 * ({@link RegistryUnavailableException}); refused credentials, a failed TLS handshake or a URL that is
 * not a registry API are a configuration error ({@link ConfigException}). Thread-safe.
 */
public final class HttpSchemaRegistry implements SchemaRegistryClient {
    private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Confluent's error codes, also Apicurio's, Karapace's and Redpanda's. */
    private static final int SCHEMA_NOT_FOUND = 40403;
    private static final int SUBJECT_NOT_FOUND = 40401;
    private static final int VERSION_NOT_FOUND = 40402;

    private final List<URI> urls;
    private final HttpClient http;
    private final String authorization;
    private final String username;
    private final Duration timeout;
    /** Index of the URL that answered last: where the next request starts. */
    private volatile int current;

    HttpSchemaRegistry(List<URI> urls, HttpClient http, String username, String password, Duration timeout) {
        this.urls = List.copyOf(urls);
        this.http = http;
        this.username = username;
        this.authorization = username == null ? null
                : "Basic " + Base64.getEncoder().encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
        this.timeout = timeout;
    }

    /** The client the {@code schema-registry.*} keys describe. */
    public static HttpSchemaRegistry of(SchemaRegistrySettings settings) {
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(settings.timeout()).version(HttpClient.Version.HTTP_1_1);
        if (settings.truststore() != null || settings.keystore() != null) {
            http.sslContext(sslContext(settings));
        }
        return new HttpSchemaRegistry(settings.urls(), http.build(), settings.username(), settings.password(), settings.timeout());
    }

    /**
     * Asks the registry for its subjects, as a check at start: refused credentials or a URL that is no
     * registry API throw {@link ConfigException}; no answer throws {@link RegistryUnavailableException}.
     */
    public void check() {
        expect(send("/subjects", null), 200);
    }

    @Override
    public RegisteredSchema schema(int id) {
        Answer answer = send("/schemas/ids/" + id, null);
        if (answer.status() == 404 && answer.errorCode() == SCHEMA_NOT_FOUND) {
            throw new BadRecordException(Code.UNKNOWN_SCHEMA, "schema ID " + id + " is not in the schema registry");
        }
        return registered(expect(answer, 200));
    }

    @Override
    public RegisteredSchema latest(String subject) {
        Answer answer = send("/subjects/" + encoded(subject) + "/versions/latest", null);
        if (answer.status() == 404 && (answer.errorCode() == SUBJECT_NOT_FOUND || answer.errorCode() == VERSION_NOT_FOUND)) {
            return null;
        }
        return registered(expect(answer, 200));
    }

    private static RegisteredSchema registered(JsonNode body) {
        List<RegisteredSchema.Reference> references = new ArrayList<>();
        for (JsonNode ref : body.path("references")) {
            references.add(new RegisteredSchema.Reference(ref.path("name").asText(), ref.path("subject").asText(), ref.path("version").asInt()));
        }
        return new RegisteredSchema(body.path("schemaType").asText(RegisteredSchema.AVRO), body.path("schema").asText(), references);
    }

    private static String encoded(String subject) {
        return URLEncoder.encode(subject, StandardCharsets.UTF_8).replace("+", "%20");
    }

    @Override
    public int register(String subject, RegisteredSchema schema) {
        ObjectNode request = JSON.createObjectNode().put("schema", schema.schema()).put("schemaType", schema.type());
        ArrayNode references = request.putArray("references");
        for (RegisteredSchema.Reference ref : schema.references()) {
            references.addObject().put("name", ref.name()).put("subject", ref.subject()).put("version", ref.version());
        }
        Answer answer = send("/subjects/" + encoded(subject) + "/versions",
                request.toString());
        if (answer.status() == 409 || answer.status() == 422) {
            throw new BadRecordException(Code.OUTPUT_SCHEMA_REFUSED, "the schema registry refused the output schema under subject "
                    + subject + " (HTTP " + answer.status() + "): " + answer.message());
        }
        return expect(answer, 200).path("id").asInt();
    }

    /** A request to each URL in turn until one answers other than as an outage. */
    private Answer send(String path, String body) {
        String failures = "";
        int first = current;
        for (int i = 0; i < urls.size(); i++) {
            int index = (first + i) % urls.size();
            URI url = URI.create(urls.get(index) + path);
            HttpRequest.Builder request = HttpRequest.newBuilder(url).timeout(timeout).header("Accept", CONTENT_TYPE);
            if (authorization != null) {
                request.header("Authorization", authorization);
            }
            request = body == null ? request.GET()
                    : request.header("Content-Type", CONTENT_TYPE).POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
            try {
                HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
                int status = response.statusCode();
                if (status >= 500 || status == 408 || status == 429) {
                    failures += (failures.isEmpty() ? "" : "; ") + url + ": HTTP " + status;
                    continue;
                }
                if (status == 401 || status == 403) {
                    throw new ConfigException(username == null
                            ? Keys.SCHEMA_REGISTRY_URL + "=" + urls.get(index) + ": the schema registry asks for credentials (HTTP "
                                    + status + "); set " + Keys.SCHEMA_REGISTRY_USERNAME + " and " + Keys.SCHEMA_REGISTRY_PASSWORD
                            : Keys.SCHEMA_REGISTRY_USERNAME + "=" + username + ": the schema registry at " + urls.get(index)
                                    + " refused these credentials (HTTP " + status + ")");
                }
                current = index;
                return new Answer(url, status, response.body());
            } catch (javax.net.ssl.SSLHandshakeException e) {
                // a certificate this client does not trust stays untrusted however long it waits: a configuration error
                throw new ConfigException(Keys.SCHEMA_REGISTRY_URL + "=" + urls.get(index) + ": the TLS handshake failed ("
                        + e.getMessage() + "); check " + Keys.SCHEMA_REGISTRY_TRUSTSTORE + " and " + Keys.SCHEMA_REGISTRY_KEYSTORE);
            } catch (IOException e) {      // refused, reset, timed out
                failures += (failures.isEmpty() ? "" : "; ") + url + ": " + describe(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RegistryUnavailableException("interrupted while asking the schema registry " + url);
            }
        }
        throw new RegistryUnavailableException("the schema registry did not answer: " + failures);
    }

    private static JsonNode expect(Answer answer, int status) {
        if (answer.status() == status) {
            JsonNode body = answer.json();
            if (body != null) {
                return body;
            }
        }
        if (answer.status() == 404) {
            throw new ConfigException(Keys.SCHEMA_REGISTRY_URL + ": " + answer.url() + " answered HTTP 404 (" + answer.message()
                    + "): not a Confluent-compatible schema registry API (Apicurio's is under /apis/ccompat/v7)");
        }
        throw new SnowstampException("the schema registry answered " + answer.url() + " with HTTP " + answer.status() + ": "
                + answer.message());
    }

    private static String describe(IOException e) {
        String type = e instanceof java.net.http.HttpTimeoutException ? "timed out"
                : e instanceof java.net.ConnectException ? "connection refused" : "I/O error";
        return e.getMessage() == null ? type : type + " (" + e.getMessage() + ")";
    }

    private static SSLContext sslContext(SchemaRegistrySettings settings) {
        try {
            TrustManagerFactory trust = null;
            if (settings.truststore() != null) {
                trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                trust.init(load(settings.truststore(), settings.truststorePassword(), Keys.SCHEMA_REGISTRY_TRUSTSTORE));
            }
            KeyManagerFactory keys = null;
            if (settings.keystore() != null) {
                keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                char[] password = settings.keystorePassword() == null ? new char[0] : settings.keystorePassword().toCharArray();
                keys.init(load(settings.keystore(), settings.keystorePassword(), Keys.SCHEMA_REGISTRY_KEYSTORE), password);
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys == null ? null : keys.getKeyManagers(), trust == null ? null : trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new ConfigException("schema-registry TLS settings are unusable: " + e.getMessage());
        }
    }

    private static KeyStore load(Path file, String password, String key) {
        try {
            // the type (PKCS12, JKS) is detected from the file
            return KeyStore.getInstance(file.toFile(), password == null ? null : password.toCharArray());
        } catch (IOException | GeneralSecurityException e) {
            throw new ConfigException(key, file, "a PKCS12 or JKS key store that opens with its password (" + e.getMessage() + ")");
        }
    }

    /** One HTTP answer. */
    private record Answer(URI url, int status, String body) {
        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                return null;
            }
        }

        int errorCode() {
            JsonNode json = json();
            return json == null ? 0 : json.path("error_code").asInt();
        }

        String message() {
            JsonNode json = json();
            String text = json != null && json.has("message") ? json.path("message").asText() : body;
            return text.length() > 300 ? text.substring(0, 300) + "..." : text;
        }
    }
}
