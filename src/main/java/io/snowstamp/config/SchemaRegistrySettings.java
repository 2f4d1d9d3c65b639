package io.snowstamp.config;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The {@code schema-registry.*} keys: where the schema registry of Avro and Protobuf values is
 * ({@code stamp.value-format}), how to reach it and under which subject the output schemas go.
 *
 * @param urls             the registry's Confluent-compatible API, tried in order (empty: no registry configured)
 * @param subjectStrategy  the output subject's name
 * @param username         HTTP basic authentication user, or null for none
 * @param password         its password (never logged)
 * @param truststore       trust store of the registry's certificate authority, or null for the JVM's
 * @param truststorePassword its password, or null
 * @param keystore         this client's certificate for TLS client authentication, or null
 * @param keystorePassword its password (and its key's), or null
 * @param timeout          one request's limit
 * @param cacheSize        input schemas whose output schema is kept
 * @param recheckInterval  how often the kept output IDs are asked for again (a registry that lost its schemas is found)
 */
public record SchemaRegistrySettings(List<URI> urls, SubjectStrategy subjectStrategy, String username, String password,
                                     Path truststore, String truststorePassword, Path keystore, String keystorePassword,
                                     Duration timeout, int cacheSize, Duration recheckInterval) {
    /** The default recheck interval. */
    public static final Duration RECHECK_INTERVAL = Duration.ofSeconds(30);

    /** The subject name strategies of Confluent's serializers, applied to the output topic and schema. */
    public enum SubjectStrategy {
        /** {@code <topic>-value} */
        TOPIC,
        /**
         * {@code <full name>-stamped}: the record's (Avro) or message's (Protobuf) full name, which is the producers' own
         * subject under Confluent's RecordNameStrategy, with a suffix no record or message name can end with
         */
        RECORD,
        /** {@code <topic>-<full name>} */
        TOPIC_RECORD;

        /** Appended to the full name under {@link #RECORD}: a dash is in no Avro or Protobuf name. */
        private static final String RECORD_SUFFIX = "-stamped";

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /** The subject of a value schema whose record or message is {@code fullName}, written to {@code topic}. */
        public String subject(String topic, String fullName) {
            return switch (this) {
                case TOPIC -> topic + "-value";
                case RECORD -> fullName + RECORD_SUFFIX;
                case TOPIC_RECORD -> topic + "-" + fullName;
            };
        }
    }

    public SchemaRegistrySettings {
        urls = List.copyOf(urls);
    }

    /** Settings with the default recheck interval. */
    public SchemaRegistrySettings(List<URI> urls, SubjectStrategy subjectStrategy, String username, String password,
                                  Path truststore, String truststorePassword, Path keystore, String keystorePassword,
                                  Duration timeout, int cacheSize) {
        this(urls, subjectStrategy, username, password, truststore, truststorePassword, keystore, keystorePassword, timeout, cacheSize,
                RECHECK_INTERVAL);
    }

    /** No registry: JSON values (the default). */
    public static SchemaRegistrySettings off() {
        return new SchemaRegistrySettings(List.of(), SubjectStrategy.TOPIC, null, null, null, null, null, null, Duration.ofSeconds(10), 1000);
    }

    static SchemaRegistrySettings from(Values v, StampSettings stamp) {
        List<URI> urls = urls(v.string(Keys.SCHEMA_REGISTRY_URL));
        if (stamp.schemaRegistryValues() && urls.isEmpty()) {
            throw new ConfigException(Keys.SCHEMA_REGISTRY_URL, "", "the registry's URL with stamp.value-format=" + stamp.valueFormat()
                    + ", e.g. http://localhost:8081 (Apicurio: http://localhost:8080/apis/ccompat/v7)");
        }
        String username = v.isSet(Keys.SCHEMA_REGISTRY_USERNAME) ? v.string(Keys.SCHEMA_REGISTRY_USERNAME) : null;
        if (username != null && username.contains(":")) {
            throw new ConfigException(Keys.SCHEMA_REGISTRY_USERNAME, username, "a user name without ':' (HTTP basic authentication)");
        }
        return new SchemaRegistrySettings(urls,
                v.choice(Keys.SCHEMA_REGISTRY_SUBJECT_STRATEGY, SubjectStrategy.class),
                username, username == null ? null : v.string(Keys.SCHEMA_REGISTRY_PASSWORD),
                store(v, Keys.SCHEMA_REGISTRY_TRUSTSTORE), nullIfEmpty(v.string(Keys.SCHEMA_REGISTRY_TRUSTSTORE_PASSWORD)),
                store(v, Keys.SCHEMA_REGISTRY_KEYSTORE), nullIfEmpty(v.string(Keys.SCHEMA_REGISTRY_KEYSTORE_PASSWORD)),
                v.duration(Keys.SCHEMA_REGISTRY_TIMEOUT, Duration.ofMillis(100), Duration.ofMinutes(10)),
                v.intInRange(Keys.SCHEMA_REGISTRY_CACHE_SIZE, 1, 1_000_000),
                v.duration(Keys.SCHEMA_REGISTRY_RECHECK_INTERVAL, Duration.ofSeconds(1), Duration.ofHours(24)));
    }

    private static List<URI> urls(String value) {
        List<URI> urls = new ArrayList<>();
        for (String part : value.split(",")) {
            String url = part.trim();
            if (url.isEmpty()) {
                continue;
            }
            URI uri;
            try {
                uri = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
            } catch (IllegalArgumentException e) {
                uri = null;
            }
            if (uri == null || uri.getHost() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))
                    || uri.getQuery() != null || uri.getFragment() != null) {
                throw new ConfigException(Keys.SCHEMA_REGISTRY_URL, value, "http:// or https:// URLs separated by commas");
            }
            urls.add(uri);
        }
        return urls;
    }

    private static Path store(Values v, String key) {
        if (!v.isSet(key)) {
            return null;
        }
        Path path = Path.of(v.string(key));
        if (!Files.isReadable(path)) {
            throw new ConfigException(key, path, "a readable key store file (PKCS12 or JKS)");
        }
        return path;
    }

    private static String nullIfEmpty(String value) {
        return value.isEmpty() ? null : value;
    }

    /** Whether a registry is configured. */
    public boolean enabled() {
        return !urls.isEmpty();
    }

    /** For a log line: the URLs, the strategy and the user (never the password). */
    public String describe() {
        return enabled() ? urls + " subject-strategy=" + subjectStrategy + (username == null ? "" : " user=" + username) : "off";
    }

    /** Never the password. */
    @Override
    public String toString() {
        return describe();
    }
}
