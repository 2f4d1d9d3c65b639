package io.snowstamp.it;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.embedded.EmbeddedKafka;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.testing.Cli;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A broker with a SASL/PLAIN listener and the standard authorizer: the stamper works with exactly
 * the ACLs the README documents, and stops with a clear authorization error — not a hang — when
 * one of them is missing.
 */
@Tag("integration")
@Timeout(300)
class SecuredClusterIT {
    private static final String ADMIN_JAAS = jaas("admin", "admin-secret");
    private static final String STAMPER_JAAS = jaas("stamper", "stamper-secret");
    private static final String REGISTRY = "snowstamp-workers";
    private static EmbeddedKafka kafka;
    private static Path brokerDir;

    @TempDir
    Path work;

    private static String jaas(String user, String password) {
        return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user
                + "\" password=\"" + password + "\";";
    }

    @BeforeAll
    static void startSecuredBroker() throws Exception {
        brokerDir = Files.createTempDirectory("snowstamp-sasl");
        Map<String, String> secured = new HashMap<>();
        // the client listener (named PLAINTEXT by EmbeddedKafka) speaks SASL; the controller stays internal
        secured.put("listener.security.protocol.map", "PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT");
        secured.put("sasl.enabled.mechanisms", "PLAIN");
        secured.put("sasl.mechanism.inter.broker.protocol", "PLAIN");
        secured.put("listener.name.plaintext.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"admin-secret\""
                        + " user_admin=\"admin-secret\" user_stamper=\"stamper-secret\";");
        secured.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        secured.put("super.users", "User:admin;User:ANONYMOUS");
        kafka = EmbeddedKafka.start(brokerDir, 0, secured);
        try (Admin admin = Admin.create(client(ADMIN_JAAS))) {
            admin.createTopics(List.of(new NewTopic(REGISTRY, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(60, TimeUnit.SECONDS);
            io.snowstamp.recovery.ChangelogWriter.awaitLeaders(admin, REGISTRY, 1, java.time.Duration.ofSeconds(60));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        kafka.close();
    }

    private static Properties client(String jaas) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        p.put(SaslConfigs.SASL_JAAS_CONFIG, jaas);
        return p;
    }

    /** The ACLs README.md documents for the stamper's principal, for one application and its topics. */
    static List<AclBinding> documentedAcls(String principal, String app, String in, String out, String dlq) {
        return documentedAcls(principal, app, in, out, dlq, REGISTRY);
    }

    private static List<AclBinding> documentedAcls(String principal, String app, String in, String out, String dlq, String registry) {
        List<AclBinding> acls = new ArrayList<>();
        acls.add(allow(ResourceType.TOPIC, in, PatternType.LITERAL, principal, AclOperation.READ));
        acls.add(allow(ResourceType.TOPIC, out, PatternType.LITERAL, principal, AclOperation.WRITE));
        acls.add(allow(ResourceType.TOPIC, out, PatternType.LITERAL, principal, AclOperation.READ));      // tail guard
        acls.add(allow(ResourceType.TOPIC, dlq, PatternType.LITERAL, principal, AclOperation.WRITE));
        acls.add(allow(ResourceType.TOPIC, app + "-", PatternType.PREFIXED, principal, AclOperation.ALL));   // changelog
        acls.add(allow(ResourceType.GROUP, app, PatternType.LITERAL, principal, AclOperation.READ));
        acls.add(allow(ResourceType.TRANSACTIONAL_ID, app + "-", PatternType.PREFIXED, principal, AclOperation.WRITE));
        acls.add(allow(ResourceType.TRANSACTIONAL_ID, app + "-", PatternType.PREFIXED, principal, AclOperation.DESCRIBE));
        // the worker registry: DESCRIBE, which its checks use, comes with READ and WRITE (the authorizer implies it)
        for (AclOperation op : List.of(AclOperation.READ, AclOperation.WRITE)) {
            acls.add(allow(ResourceType.TOPIC, registry, PatternType.LITERAL, principal, op));
        }
        return acls;
    }

    private static AclBinding allow(ResourceType type, String name, PatternType pattern, String principal, AclOperation op) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW));
    }

    private Map<String, String> stamperSettings(String app, String in, String out, String dlq) {
        Map<String, String> settings = new HashMap<>();
        settings.put("kafka.bootstrap.servers", kafka.bootstrapServers());
        settings.put("kafka.security.protocol", "SASL_PLAINTEXT");
        settings.put("kafka.sasl.mechanism", "PLAIN");
        settings.put("kafka.sasl.jaas.config", STAMPER_JAAS);
        settings.put("application.id", app);
        settings.put("input.topic", in);
        settings.put("output.topic", out);
        settings.put("dlq.topic", dlq);
        settings.put("state.dir", work.resolve("state").toString());
        settings.put("instance.id", "secured");
        settings.put("recovery.tail-guard-timeout", "20s");
        settings.put("id.space", app);      // each test's application in a space of its own: both use the default offset
        return settings;
    }

    private void createTopics(Admin admin, String... names) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (String name : names) {
            topics.add(new NewTopic(name, name.contains("dlq") ? 1 : 2, (short) 1));
        }
        admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
        // as topics apply does: until their leaders take writes (the stamper looks at once)
        for (NewTopic topic : topics) {
            io.snowstamp.recovery.ChangelogWriter.awaitLeaders(admin, topic.name(), topic.numPartitions(), java.time.Duration.ofSeconds(60));
        }
    }

    /**
     * The authorizer applies new ACLs from the metadata log, a moment after createAcls returns: on a
     * loaded machine the stamper's first describe could still be refused. Waits until it is not.
     */
    private static void awaitAclsApplied(String topic) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (Admin stamper = Admin.create(client(STAMPER_JAAS))) {
            while (true) {
                try {
                    stamper.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS);
                    return;
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("the stamper's ACLs on " + topic + " were not applied within 30 s", e);
                    }
                    TimeUnit.MILLISECONDS.sleep(100);
                }
            }
        }
    }

    private void produce(String topic, int count) {
        Properties p = client(ADMIN_JAAS);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
            }
        }
    }

    private String[] adminCli(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--bootstrap-servers", kafka.bootstrapServers(), "--set", "kafka.security.protocol=SASL_PLAINTEXT",
                "--set", "kafka.sasl.mechanism=PLAIN", "--set", "kafka.sasl.jaas.config=" + ADMIN_JAAS));
        return all.toArray(String[]::new);
    }

    @Test
    void shouldStampWithExactlyTheDocumentedAcls() throws Exception {
        String app = "secured-ok";
        try (Admin admin = Admin.create(client(ADMIN_JAAS))) {
            createTopics(admin, "sec-in", "sec-out", "sec-dlq");
            admin.createAcls(documentedAcls("User:stamper", app, "sec-in", "sec-out", "sec-dlq")).all().get(30, TimeUnit.SECONDS);
        }
        awaitAclsApplied("sec-in");
        produce("sec-in", 500);
        try (StreamsRunner runner = new StreamsRunner(ConfigLoader.load(null, Map.of(),
                stamperSettings(app, "sec-in", "sec-out", "sec-dlq")), System::currentTimeMillis)) {
            runner.start();
            Cli.Result verify = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                verify = Cli.run(adminCli("verify", "--topic", "sec-out", "--source", "sec-in"));
                if (verify.exitCode() == 0) {
                    break;
                }
                assertThat(runner.state().isRunningOrRebalancing() || runner.state() == org.apache.kafka.streams.KafkaStreams.State.CREATED)
                        .as("stamper died: %s", runner.state()).isTrue();
                Thread.sleep(1000);
            }
            assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=500 duplicates=0 missing=0 extra=0");
        }
    }

    /**
     * Sequence mode on the same documented ACLs, plus READ on the tags topic (its row): it numbers every record. The
     * output's DESCRIBE_CONFIGS is not among them, so the start's compaction check of the output is a WARN, not a stop.
     */
    @Test
    void shouldNumberInSequenceModeWithTheDocumentedAcls() throws Exception {
        String app = "secured-seq";
        try (Admin admin = Admin.create(client(ADMIN_JAAS))) {
            createTopics(admin, "seq-in", "seq-out", "seq-dlq", "seq-tags");
            List<AclBinding> acls = new ArrayList<>(documentedAcls("User:stamper", app, "seq-in", "seq-out", "seq-dlq"));
            acls.add(allow(ResourceType.TOPIC, "seq-tags", PatternType.LITERAL, "User:stamper", AclOperation.READ));
            admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
        }
        awaitAclsApplied("seq-in");
        Properties producerProps = client(ADMIN_JAAS);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < 200; i++) {         // the key is the tag
                producer.send(new ProducerRecord<>("seq-in", (i % 2 == 0 ? "order" : "refund").getBytes(StandardCharsets.UTF_8),
                        ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
            }
        }
        Map<String, String> settings = stamperSettings(app, "seq-in", "seq-out", "seq-dlq");
        settings.put("id.mode", "sequence");
        settings.put("sequence.tags-topic", "seq-tags");
        settings.put("sequence.auto-create", "true");
        try (StreamsRunner runner = new StreamsRunner(ConfigLoader.load(null, Map.of(), settings), System::currentTimeMillis)) {
            runner.start();
            Properties props = client(ADMIN_JAAS);
            props.put("group.id", "seq-check");
            props.put("auto.offset.reset", "earliest");
            props.put("isolation.level", "read_committed");
            java.util.Set<String> numbers = new java.util.HashSet<>();
            int records = 0;
            try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<>(
                    props, new org.apache.kafka.common.serialization.ByteArrayDeserializer(), new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
                consumer.subscribe(List.of("seq-out"));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (records < 200 && System.nanoTime() < deadline) {
                    assertThat(runner.state().isRunningOrRebalancing() || runner.state() == org.apache.kafka.streams.KafkaStreams.State.CREATED)
                            .as("stamper died: %s", runner.state()).isTrue();
                    for (var record : consumer.poll(Duration.ofMillis(500))) {
                        records++;
                        numbers.add(new String(record.key() == null ? new byte[0] : record.key(), StandardCharsets.UTF_8) + "/"
                                + new String(record.headers().lastHeader(io.snowstamp.state.IdHeader.ID).value(), StandardCharsets.US_ASCII));
                    }
                }
            }
            assertThat(records).as("every record numbered").isEqualTo(200);
            assertThat(numbers).as("no number twice per tag").hasSize(200);
        }
    }

    @Test
    void shouldStopWithAClearAuthorizationErrorWhenAnAclIsMissing() throws Exception {
        String app = "secured-missing";
        try (Admin admin = Admin.create(client(ADMIN_JAAS))) {
            createTopics(admin, "miss-in", "miss-out", "miss-dlq");
            List<AclBinding> acls = new ArrayList<>(documentedAcls("User:stamper", app, "miss-in", "miss-out", "miss-dlq"));
            // the tail guard's READ on the output topic is the one most easily forgotten
            acls.removeIf(acl -> acl.pattern().name().equals("miss-out") && acl.entry().operation() == AclOperation.READ);
            admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
        }
        awaitAclsApplied("miss-in");
        produce("miss-in", 10);
        try (StreamsRunner runner = new StreamsRunner(ConfigLoader.load(null, Map.of(),
                stamperSettings(app, "miss-in", "miss-out", "miss-dlq")), System::currentTimeMillis)) {
            runner.start();
            Throwable failure = catchThrowable(() -> assertThat(runner.awaitTermination(Duration.ofSeconds(90)))
                    .as("the stamper must stop, not hang").isTrue());
            assertThat(failure).isInstanceOf(SnowstampException.class);
            assertThat(failure.getMessage()).contains("miss-out").containsIgnoringCase("authoriz");
        }
    }

    /**
     * operations.md: the transactional-id ACL is not optional under exactly-once: Kafka Streams' own producers need it
     * for their transactions, so without it the stamper stops with an authorization error (the predecessor fence, which
     * needs the same ACL, never gets to warn about it).
     */
    @Test
    void shouldStopWithAClearAuthorizationErrorWithoutTheTransactionalIdAcl() throws Exception {
        String app = "secured-no-txn";
        try (Admin admin = Admin.create(client(ADMIN_JAAS))) {
            createTopics(admin, "txn-in", "txn-out", "txn-dlq");
            List<AclBinding> acls = new ArrayList<>(documentedAcls("User:stamper", app, "txn-in", "txn-out", "txn-dlq"));
            acls.removeIf(acl -> acl.pattern().resourceType() == ResourceType.TRANSACTIONAL_ID);
            admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
        }
        awaitAclsApplied("txn-in");
        produce("txn-in", 10);
        try (StreamsRunner runner = new StreamsRunner(ConfigLoader.load(null, Map.of(),
                stamperSettings(app, "txn-in", "txn-out", "txn-dlq")), System::currentTimeMillis)) {
            runner.start();
            Throwable failure = catchThrowable(() -> assertThat(runner.awaitTermination(Duration.ofSeconds(90)))
                    .as("the stamper must stop, not hang").isTrue());
            assertThat(failure).isInstanceOf(SnowstampException.class);
            assertThat(failure.getMessage()).containsIgnoringCase("transactional").containsIgnoringCase("authoriz")
                    .as("names the transactional ids the ACL must allow").contains(app + "-");
        }
    }

    /**
     * operations.md, least privileges: each of the other documented ACLs is needed too. Without it the stamper stops
     * with an authorization error naming what it may not use (the topic, a changelog under the prefix, the registry, the
     * group), never a hang: the topics' at start, before Kafka Streams starts (the dead-letter topic too, before any bad
     * record comes); the group's when Kafka Streams joins it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"input-read", "output-write", "dlq-write", "app-prefix", "registry-read", "registry-write", "group-read"})
    void shouldStopWithAClearAuthorizationErrorWithoutEachOtherDocumentedAcl(String missing) throws Exception {
        String app = "secured-no-" + missing;
        String in = missing + "-in";
        String out = missing + "-out";
        String dlq = missing + "-dlq";
        // a registry of its own: the other tests' ACLs on the shared one are the same principal's
        String registry = missing + "-workers";
        try (Admin admin = Admin.create(client(ADMIN_JAAS))) {
            createTopics(admin, in, out, dlq);
            admin.createTopics(List.of(new NewTopic(registry, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(60, TimeUnit.SECONDS);
            io.snowstamp.recovery.ChangelogWriter.awaitLeaders(admin, registry, 1, Duration.ofSeconds(60));
            List<AclBinding> acls = new ArrayList<>(documentedAcls("User:stamper", app, in, out, dlq, registry));
            int before = acls.size();
            acls.removeIf(acl -> switch (missing) {
                case "input-read" -> acl.pattern().name().equals(in);
                case "output-write" -> acl.pattern().name().equals(out) && acl.entry().operation() == AclOperation.WRITE;
                case "dlq-write" -> acl.pattern().name().equals(dlq);
                case "app-prefix" -> acl.pattern().resourceType() == ResourceType.TOPIC && acl.pattern().name().equals(app + "-");
                case "registry-read" -> acl.pattern().name().equals(registry) && acl.entry().operation() == AclOperation.READ;
                case "registry-write" -> acl.pattern().name().equals(registry) && acl.entry().operation() == AclOperation.WRITE;
                case "group-read" -> acl.pattern().resourceType() == ResourceType.GROUP;
                default -> throw new IllegalArgumentException(missing);
            });
            assertThat(acls).as("an ACL removed").hasSizeLessThan(before);
            admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
        }
        awaitAclsApplied(out);
        produce(in, 10);
        String named = switch (missing) {
            case "input-read" -> in;
            case "output-write" -> out;
            case "dlq-write" -> dlq;
            case "app-prefix" -> app + "-";
            case "registry-read", "registry-write" -> registry;
            default -> app;     // the group
        };
        Map<String, String> settings = stamperSettings(app, in, out, dlq);
        settings.put("registry.topic", registry);
        try (StreamsRunner runner = new StreamsRunner(ConfigLoader.load(null, Map.of(), settings), System::currentTimeMillis)) {
            Throwable failure = catchThrowable(() -> {
                runner.start();
                assertThat(runner.awaitTermination(Duration.ofSeconds(90))).as("the stamper must stop, not hang").isTrue();
            });
            System.out.println("without the ACL " + missing + ": " + (failure == null ? "no error" : failure.getMessage()));
            assertThat(failure).as("the stamper stopped with an error").isNotNull().isNotInstanceOf(AssertionError.class);
            assertThat(failure.getMessage()).contains(named).containsIgnoringCase("authoriz");
        }
    }
}
