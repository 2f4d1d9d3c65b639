package io.snowstamp.config;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every configuration key snowstamp accepts, with its default and one line of help. The table is
 * the single source for defaults, for rejecting unknown keys (typos fail at startup instead of
 * being ignored) and for mapping {@code SNOWSTAMP_*} environment variables back to keys.
 * Keys starting with {@code kafka.} are not listed: they pass straight to the Kafka clients.
 *
 * <p>Why not Kafka's {@code ConfigDef} (evaluated against kafka-clients 4.3.1 for issue 15): it
 * would replace only the easy third of {@link Values} (whole numbers in a range, booleans, one of
 * a few words) and make the rest harder. Its messages are not ours: {@code "Invalid value three for
 * configuration id.worker-offset: Not a number of type LONG"}, {@code "Value must be at least 0"},
 * {@code "String must be one of (case insensitive): NUMBER, STRING"} — a Java type name, one bound
 * instead of the accepted range, choices in the wrong case — so every key would need its accepted
 * text kept beside the definition and every {@code ConfigException} caught and rewritten, and
 * {@code ConfigDef.parse} stops at the first bad key without telling which one except inside that
 * text. Most of our values are not its types: durations with units ({@code 10s}, {@code 1m}), topic
 * names, instants, {@code auto} or a number, and keys whose empty value means "derived" (the
 * preset's widths, the takeover gap from the guarantee) — and a {@code Range} refuses a null
 * default at definition time, so those would all be strings with hand-written validators anyway.
 * It accepts unknown keys silently (we refuse typos with the file or variable they came from),
 * renders RST/HTML rather than the Markdown our reference is ({@code ReferenceDocsTest} renders
 * from {@link #help()} and {@link #defaults()} either way), and would bind this package, which
 * depends on nothing but {@code id}, to the Kafka client library. Cross-key checks stay in the
 * slices whichever table is used.
 */
public final class Keys {
    public static final String APPLICATION_ID = "application.id";
    public static final String INPUT_TOPIC = "input.topic";
    public static final String OUTPUT_TOPIC = "output.topic";
    public static final String DLQ_TOPIC = "dlq.topic";
    public static final String PROCESSING_GUARANTEE = "processing.guarantee";
    public static final String ID_PRESET = "id.preset";
    public static final String ID_EPOCH = "id.epoch";
    public static final String ID_TIME_UNIT = "id.time-unit";
    public static final String ID_TIME_BITS = "id.time-bits";
    public static final String ID_DATACENTER_BITS = "id.datacenter-bits";
    public static final String ID_WORKER_BITS = "id.worker-bits";
    public static final String ID_SEQUENCE_BITS = "id.sequence-bits";
    public static final String ID_WORKER_IN_LOW_BITS = "id.worker-in-low-bits";
    public static final String ID_DATACENTER_ID = "id.datacenter-id";
    public static final String ID_WORKER_OFFSET = "id.worker-offset";
    public static final String ID_LIFETIME_WARNING = "id.lifetime-warning";
    public static final String STAMP_JSON_FIELD = "stamp.json-field";
    public static final String STAMP_JSON_TYPE = "stamp.json-type";
    public static final String STAMP_ON_EXISTING_FIELD = "stamp.on-existing-field";
    public static final String STAMP_PROVENANCE = "stamp.provenance";
    public static final String STAMP_HEADER_FORMAT = "stamp.header-format";
    public static final String STAMP_MAX_DEPTH = "stamp.max-depth";
    public static final String STAMP_VALUE_FORMAT = "stamp.value-format";
    public static final String STAMP_SCHEMA_FIELD = "stamp.schema-field";
    public static final String STAMP_PROTOBUF_FIELD_NUMBER = "stamp.protobuf-field-number";
    public static final String SCHEMA_REGISTRY_URL = "schema-registry.url";
    public static final String SCHEMA_REGISTRY_SUBJECT_STRATEGY = "schema-registry.subject-strategy";
    public static final String SCHEMA_REGISTRY_USERNAME = "schema-registry.username";
    public static final String SCHEMA_REGISTRY_PASSWORD = "schema-registry.password";
    public static final String SCHEMA_REGISTRY_TRUSTSTORE = "schema-registry.truststore";
    public static final String SCHEMA_REGISTRY_TRUSTSTORE_PASSWORD = "schema-registry.truststore-password";
    public static final String SCHEMA_REGISTRY_KEYSTORE = "schema-registry.keystore";
    public static final String SCHEMA_REGISTRY_KEYSTORE_PASSWORD = "schema-registry.keystore-password";
    public static final String SCHEMA_REGISTRY_TIMEOUT = "schema-registry.timeout";
    public static final String SCHEMA_REGISTRY_CACHE_SIZE = "schema-registry.cache-size";
    public static final String SCHEMA_REGISTRY_RECHECK_INTERVAL = "schema-registry.recheck-interval";
    public static final String ID_MAX_LEAD = "id.max-lead";
    public static final String ID_ON_EXCESS_LEAD = "id.on-excess-lead";
    public static final String ID_RESERVATION = "id.reservation";
    public static final String LEASE_HEARTBEAT = "lease.heartbeat";
    public static final String RECOVERY_TAIL_GUARD = "recovery.tail-guard";
    public static final String RECOVERY_TAIL_GUARD_TIMEOUT = "recovery.tail-guard-timeout";
    public static final String RECOVERY_TAKEOVER_GAP = "recovery.takeover-gap";
    public static final String RECOVERY_STALL_AFTER = "recovery.stall-after";
    public static final String PROFILE = "profile";
    public static final String STATE_DIR = "state.dir";
    public static final String INSTANCE_ID = "instance.id";
    public static final String ADMIN_PORT = "admin.port";
    public static final String ADMIN_BIND = "admin.bind";
    public static final String ADMIN_ADVERTISED_HOST = "admin.advertised-host";
    public static final String ID_MODE = "id.mode";
    public static final String SEQUENCE_TAG_SOURCE = "sequence.tag-source";
    public static final String SEQUENCE_AUTO_CREATE = "sequence.auto-create";
    public static final String SEQUENCE_DEFAULT_START = "sequence.default-start";
    public static final String SEQUENCE_DEFAULT_STEP = "sequence.default-step";
    public static final String SEQUENCE_TAGS_TOPIC = "sequence.tags-topic";
    public static final String SEQUENCE_CHECKPOINT_INTERVAL = "sequence.checkpoint-interval";
    public static final String ID_SPACE = "id.space";
    public static final String ID_WORKER_REGISTRY = "id.worker-registry";
    public static final String REGISTRY_TOPIC = "registry.topic";
    public static final String REGISTRY_HEARTBEAT = "registry.heartbeat";
    public static final String REGISTRY_STALE_AFTER = "registry.stale-after";
    public static final String REGISTRY_EXPIRE_AFTER = "registry.expire-after";
    public static final String KAFKA_PREFIX = "kafka.";
    public static final String BOOTSTRAP_SERVERS = KAFKA_PREFIX + "bootstrap.servers";

    /** key -> default ("" = empty/unset); insertion order is the order shown in the docs. */
    static final Map<String, String> DEFAULTS = new LinkedHashMap<>();
    /** key -> one line of help. */
    static final Map<String, String> HELP = new LinkedHashMap<>();

    static {
        define(APPLICATION_ID, "snowstamp", "Kafka Streams application id (consumer group, changelog prefix)");
        define(INPUT_TOPIC, "events.raw", "topic to read raw events from");
        define(OUTPUT_TOPIC, "events.stamped", "topic to write stamped events to (same partition count as the input; any count in sequence mode)");
        define(DLQ_TOPIC, "events.dlq", "dead-letter topic for records that cannot be stamped");
        define(PROCESSING_GUARANTEE, "exactly_once_v2", "`exactly_once_v2` or `at_least_once`");
        define(ID_PRESET, "snowflake", "`snowflake`, `sonyflake`, `butterfly` or `js-safe`");
        define(ID_EPOCH, "", "custom epoch (ISO-8601 instant or Unix millis); default from the preset");
        define(ID_TIME_UNIT, "", "time unit of the ID's time field (1ms .. 1s); default from the preset");
        define(ID_TIME_BITS, "", "width of the time field; default from the preset");
        define(ID_DATACENTER_BITS, "", "width of the datacenter field; default from the preset");
        define(ID_WORKER_BITS, "", "width of the worker field; default from the preset");
        define(ID_SEQUENCE_BITS, "", "width of the sequence field (total of the four <= 63)");
        define(ID_WORKER_IN_LOW_BITS, "", "true puts datacenter+worker below the sequence; default from the preset");
        define(ID_DATACENTER_ID, "0", "datacenter field of every ID");
        define(ID_WORKER_OFFSET, "0", "worker ID = worker offset + input partition; `auto`: the lowest free range in the worker registry");
        define(ID_LIFETIME_WARNING, "365d", "`run`, `demo` and `bench` warn when the ID layout runs out sooner than this, and refuse once it has run out (or its epoch is in the future)");
        define(ID_MAX_LEAD, "10s", "how far IDs may run ahead of the wall clock before `id.on-excess-lead` applies");
        define(ID_ON_EXCESS_LEAD, "continue", "`continue` (warn once a minute per partition) or `pause` (hold the partition's records, durably, until the clock catches up)");
        define(ID_RESERVATION, "1s", "IDs reserved ahead per write-ahead reservation (no ID above the last one acknowledged and read back by a lease round leaves; the next is sent when half is used; ten times as far under exactly_once_v2 with the tail guard, where the output tail decides a resume); `0` = every ID waits for its own write and a lease round");
        define(LEASE_HEARTBEAT, "5s", "how often a task refreshes `heartbeatAt` in its worker state, with `lastId` as issued by then");
        define(RECOVERY_TAIL_GUARD, "true", "at task start, resume above the newest IDs found in the task's output partition");
        define(RECOVERY_TAIL_GUARD_TIMEOUT, "60s", "how long the tail guard may take before the task fails");
        define(RECOVERY_TAKEOVER_GAP, "", "time added to the resume point at every task start; default 0 under exactly_once_v2, 1s under at_least_once");
        define(RECOVERY_STALL_AFTER, "60s", "a partition held here whose input has waited this long (counted while the instance"
                + " is RUNNING and its task's lease confirmed) with no ID issued and nothing committed is reported stalled"
                + " (WARN, /health, metrics) and the stream threads are restarted, with a growing pause between restarts;"
                + " longer than kafka.commit.interval.ms; 0: never (snowflake mode)");
        define(STAMP_JSON_FIELD, "", "also inject the ID into JSON object values under this field (empty: header only)");
        define(STAMP_JSON_TYPE, "number", "`number` or `string` (for JavaScript consumers)");
        define(STAMP_ON_EXISTING_FIELD, "reject", "reject (to the DLQ), overwrite or keep when the field already exists");
        define(STAMP_MAX_DEPTH, "64", "deepest nesting of objects and arrays accepted in JSON field mode (deeper: to the DLQ)");
        define(STAMP_PROVENANCE, "true", "add header `snowstamp-src` = `topic/partition/offset` of the input record");
        define(STAMP_HEADER_FORMAT, "text", "`text`: headers `snowstamp-id` (decimal digits) and `snowstamp-src`; `compact`"
                + " (mode=snowflake only): `snowid` = the ID and `snowsrc` = the input offset, 8 bytes big-endian each, which costs"
                + " less CPU per record (see [Benchmarks](benchmarks.md)); every snowstamp command reads both");
        define(STAMP_VALUE_FORMAT, "json", "`json`: values pass unchanged, or get `stamp.json-field`; `avro`, `protobuf` or `json-schema`:"
                + " values framed for a schema registry get the ID as field `stamp.schema-field` (Avro, Protobuf: appended without decoding"
                + " them; JSON Schema: spliced into the JSON object as in `json` mode), under an output schema registered in"
                + " `schema-registry.url` ([Schema-registry values](schema-registry.md))");
        define(STAMP_SCHEMA_FIELD, "id", "`avro`/`protobuf`/`json-schema`: the field the ID is written to (a `long` / `int64` / `integer`)");
        define(STAMP_PROTOBUF_FIELD_NUMBER, "", "`protobuf`: the new field's number; empty: the number the output subject gives the field"
                + " already, else 2047, else the highest free number below it, else one above the highest the message uses or reserves");
        define(SCHEMA_REGISTRY_URL, "", "`avro`/`protobuf`/`json-schema`: the schema registry's Confluent-compatible API, one URL or several separated by commas"
                + " (Apicurio: `http://host:8080/apis/ccompat/v7`)");
        define(SCHEMA_REGISTRY_SUBJECT_STRATEGY, "topic", "the subject the output schema is registered under: `topic` (`<output.topic>-value`),"
                + " `record` (`<full name>-stamped`: never the producers' own record-name subject) or `topic-record` (`<output.topic>-<full name>`)");
        define(SCHEMA_REGISTRY_USERNAME, "", "user name for the registry's HTTP basic authentication (empty: none)");
        define(SCHEMA_REGISTRY_PASSWORD, "", "password for the registry's HTTP basic authentication");
        define(SCHEMA_REGISTRY_TRUSTSTORE, "", "`https`: trust store (PKCS12 or JKS file) of the registry's certificate authority; empty: the JVM's");
        define(SCHEMA_REGISTRY_TRUSTSTORE_PASSWORD, "", "password of `schema-registry.truststore`");
        define(SCHEMA_REGISTRY_KEYSTORE, "", "`https`: key store (PKCS12 or JKS file) with this client's certificate, for registries that ask for one");
        define(SCHEMA_REGISTRY_KEYSTORE_PASSWORD, "", "password of `schema-registry.keystore` and of its key");
        define(SCHEMA_REGISTRY_TIMEOUT, "10s", "how long one registry request may take before it counts as a failure (retried: see `stamp.value-format`)");
        define(SCHEMA_REGISTRY_CACHE_SIZE, "1000", "input schemas whose output schema is kept in memory (the registry is asked once for each)");
        define(SCHEMA_REGISTRY_RECHECK_INTERVAL, "30s", "how often every kept output schema ID is asked for again (one request each, beside the"
                + " stream threads): a registry that lost its schemas (restarted empty) is found within it and the output schemas registered again");
        define(PROFILE, "default", "`default` (exactly-once, 100 ms commits) or `throughput` (1 s commits: fewer, larger transactions, about 1 s latency); see [Performance](benchmarks.md#performance)");
        define(STATE_DIR, "data/streams", "local state directory, one sub-directory per instance: in snowflake mode with `id.on-excess-lead=pause` or schema-registry values each task's RocksDB store of the records it sets aside while their ID waits (`pending-records`, ~150 KB per task while it runs, restored from its changelog); otherwise that store and the worker state are kept in memory");
        define(INSTANCE_ID, "", "name of this instance (lease holder, state sub-directory); default: host name");
        define(ADMIN_PORT, "", "port of the admin HTTP server (health, metrics, state) of 'run'; empty: off; 0: any free port");
        define(ADMIN_BIND, "127.0.0.1", "address the admin server listens on (`0.0.0.0`: every interface)");
        define(ADMIN_ADVERTISED_HOST, "", "host name other instances use to reach this admin server (/state of all instances);"
                + " default: admin.bind, or the host name when admin.bind is a wildcard address");
        define(ID_MODE, "snowflake", "`snowflake` (time-ordered 64-bit IDs) or `sequence` (dense numbers per tag, see [Sequences](sequences.md))");
        define(SEQUENCE_TAG_SOURCE, "key", "sequence mode: where a record's tag is, key or field:NAME (a top-level JSON field)");
        define(SEQUENCE_AUTO_CREATE, "false", "`true` numbers unregistered tags with the defaults; `false` sends their records to the DLQ (`unknown-tag`)");
        define(SEQUENCE_DEFAULT_START, "1", "sequence mode: first number of an auto-created tag, and of tags create without --start");
        define(SEQUENCE_DEFAULT_STEP, "1000", "sequence mode: numbers reserved per state write for an auto-created tag, and tags create without --step");
        define(SEQUENCE_TAGS_TOPIC, "snowstamp-tags", "sequence mode: compacted topic of tag definitions (tags create, tags set-step)");
        define(SEQUENCE_CHECKPOINT_INTERVAL, "30s", "how often a task records the output offset its state covers, with the last number of every tag that advanced (bounds the tail scan at the next start)");
        define(ID_SPACE, "default", "ID space: applications whose IDs end up together share one; their worker ranges never overlap in it ([ID spaces](id-spaces.md))");
        define(ID_WORKER_REGISTRY, "on", "`on`: claim `[offset, offset + partitions)` in the worker registry at start; `off`: nothing checks offsets (WARN at start)");
        define(REGISTRY_TOPIC, "snowstamp-workers", "the worker registry topic (compacted, one partition)");
        define(REGISTRY_HEARTBEAT, "10s", "how often a running application re-asserts its claim (use one value per cluster)");
        define(REGISTRY_STALE_AFTER, "1m", "a claim without heartbeat for longer is listed as `stale`; `workers release --force` (or `recover --to-application-id ... --force`) recovers it");
        define(REGISTRY_EXPIRE_AFTER, "", "empty: never take over a claim; else id.worker-offset=auto may recycle a claim without heartbeat for longer (after recording its marks)");
    }

    private Keys() {
    }

    private static void define(String key, String defaultValue, String help) {
        DEFAULTS.put(key, defaultValue);
        HELP.put(key, help);
    }

    /** Whether snowstamp accepts this key (a listed key or any {@code kafka.*} key). */
    public static boolean isKnown(String key) {
        return DEFAULTS.containsKey(key) || (key.startsWith(KAFKA_PREFIX) && key.length() > KAFKA_PREFIX.length());
    }

    /** Keys with their defaults, in documentation order. */
    public static Map<String, String> defaults() {
        return java.util.Collections.unmodifiableMap(DEFAULTS);
    }

    /** Keys with one line of help, in documentation order. */
    public static Map<String, String> help() {
        return java.util.Collections.unmodifiableMap(HELP);
    }

    /**
     * The key an environment variable names, or null when it names none. {@code SNOWSTAMP_ID_WORKER_OFFSET}
     * is {@code id.worker-offset}; {@code SNOWSTAMP_KAFKA_SASL_MECHANISM} is {@code kafka.sasl.mechanism}
     * (for Kafka keys every underscore is a dot, as Kafka keys never contain dashes).
     */
    public static String fromEnvironmentName(String variable) {
        if (!variable.startsWith("SNOWSTAMP_")) {
            return null;
        }
        String rest = variable.substring("SNOWSTAMP_".length());
        for (String key : DEFAULTS.keySet()) {
            if (envName(key).equals(rest)) {
                return key;
            }
        }
        if (rest.startsWith("KAFKA_") && rest.length() > "KAFKA_".length()) {
            return rest.toLowerCase(java.util.Locale.ROOT).replace('_', '.');
        }
        return null;
    }

    /** The environment variable suffix for a key: {@code id.worker-offset} -> {@code ID_WORKER_OFFSET}. */
    public static String envName(String key) {
        return key.toUpperCase(java.util.Locale.ROOT).replace('.', '_').replace('-', '_');
    }
}
