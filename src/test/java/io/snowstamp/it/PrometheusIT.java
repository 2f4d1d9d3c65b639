package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.PrometheusServer;
import io.snowstamp.testing.PrometheusText;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped alert rules and Grafana dashboard against a real Prometheus (Debian's {@code prometheus} package, started
 * on loopback with a configuration this test writes) scraping a real stamper on the shared broker. First, every metric
 * every rule reads and every query of every dashboard panel has a series from the real scrape — a renamed metric fails
 * here, not on an operator's night — and every rule evaluates without error. Then a real stall: the stamper's first
 * main consumer never delivers input partition 0 ({@code -Dsnowstamp.test.stall-partition=0}) while partition 1 stamps
 * its records and goes idle; {@code SnowstampPartitionStalled} reaches {@code firing} in Prometheus' own
 * {@code /api/v1/alerts} for partition 0 only (the idle partition pages nothing), and is gone once the stall watch's
 * restart (after {@code recovery.stall-after}, set past the alert's 2.5 minutes) has stamped partition 0, leaving the
 * restart's own warning ({@code SnowstampStallRestarts}).
 */
@Tag("integration")
@Tag("full")   // -Pfull only: the shipped rule waits 2.5 minutes of stall before it fires
@Order(4)      // among the longest: starts early in the parallel run (see development.md)
@Timeout(600)
class PrometheusIT extends OnSharedBroker {
    private static final Path RULES = Path.of("src/main/deploy/prometheus/snowstamp-rules.yml");
    private static final Path DASHBOARD = Path.of("src/main/deploy/grafana/snowstamp-dashboard.json");
    private static final Pattern ADMIN = Pattern.compile("admin: http://127\\.0\\.0\\.1:(\\d+)");
    /** A metric selector in PromQL: a name not followed by '(' (a function), with its label matchers if any. */
    private static final Pattern SELECTOR = Pattern.compile("\\b([a-zA-Z_:][a-zA-Z0-9_:]*+)(\\{[^}]*})?+(?!\\s*\\()");
    private static final Set<String> NOT_METRICS = Set.of("and", "or", "unless", "by", "without", "on", "ignoring",
            "bool", "offset");
    private static final String JOB = "snowstamp";
    private static final String STALLED = "SnowstampPartitionStalled";
    private static final int PER_PARTITION = 50;
    @TempDir
    Path work;

    @Test
    void shouldFindEveryQueriedMetricInARealScrapeAndFireTheStallAlertOnARealStall() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("prometheus"), topics, "s1")
                .with("recovery.stall-after", "200s").with("admin.port", "0")
                .withJvmArg("-Dsnowstamp.test.stall-partition=0");
        try (ChildJvm child = stamper.start()) {
            long started = System.nanoTime();
            String admin = adminAddress(child);
            try (PrometheusServer prometheus = PrometheusServer.start(work.resolve("prometheus"), JOB, List.of(admin), List.of(RULES))) {
                produce(topics.in());

                List<String> selectors = ruleSelectors();
                List<String> panels = dashboardQueries(topics.in());
                List<String> queries = new ArrayList<>(selectors);
                queries.addAll(panels);
                List<String> empty = awaitNonEmpty(prometheus, queries, 90);
                assertThat(empty).as("queries without a series from a real scrape").isEmpty();
                for (JsonNode group : prometheus.ruleGroups()) {
                    for (JsonNode rule : group.get("rules")) {
                        assertThat(rule.get("health").asText()).as(rule.get("name") + ": " + rule.path("lastError")).isEqualTo("ok");
                    }
                }

                JsonNode firing = await(() -> alerts(prometheus, "firing"), a -> !a.isEmpty(), 240, "SnowstampPartitionStalled firing");
                long toFiring = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
                assertThat(firing).as("the only firing alert: the stalled partition 0, not the idle partition 1")
                        .hasSize(1).allSatisfy(alert -> {
                            assertThat(alert.get("labels").get("alertname").asText()).isEqualTo(STALLED);
                            assertThat(alert.get("labels").get("partition").asText()).isEqualTo("0");
                        });
                assertThat(restarts(admin)).isZero();

                // the stall watch's restart cures it: the stall alert goes, and the restart's own warning comes
                // (pending alerts count: a partition between two owners while the restart's rebalance runs is a pending
                // SnowstampPartitionUnassigned for a moment, longer on a loaded machine)
                JsonNode after = await(() -> alerts(prometheus, null),
                        a -> !names(a).isEmpty() && names(a).stream().allMatch("SnowstampStallRestarts"::equals), 180,
                        STALLED + " gone once the stall watch restarted the stream thread, and nothing but its restart's warning");
                assertThat(names(after)).containsOnly("SnowstampStallRestarts");
                long toResolved = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
                System.out.printf("PrometheusIT: %d metric selectors of the rules and %d dashboard queries answered; %s firing %d s"
                        + " after the stamper started, gone after %d s%n", selectors.size(), panels.size(), STALLED, toFiring, toResolved);
                assertThat(broker.consume(topics.out(), 2 * PER_PARTITION, Duration.ofSeconds(60))).as(child.logs())
                        .hasSize(2 * PER_PARTITION);
                assertThat(restarts(admin)).isEqualTo(1.0);
            }
        }
    }

    /** Every metric selector of every rule of the shipped rules file, label matchers included. */
    private static List<String> ruleSelectors() throws Exception {
        Set<String> selectors = new LinkedHashSet<>();
        for (JsonNode group : new ObjectMapper(new YAMLFactory()).readTree(RULES.toFile()).get("groups")) {
            for (JsonNode rule : group.get("rules")) {
                String expr = rule.get("expr").asText()
                        .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")   // grouping labels
                        .replaceAll("\\[[^]]*]", " ");                                                          // ranges
                Matcher m = SELECTOR.matcher(expr);
                while (m.find()) {
                    if (!NOT_METRICS.contains(m.group(1))) {
                        selectors.add(m.group(1) + (m.group(2) == null ? "" : m.group(2)));
                    }
                }
            }
        }
        assertThat(selectors).as("selectors found in the rules").contains("snowstamp_input_waiting_records", "up{job=\"snowstamp\"}");
        return new ArrayList<>(selectors);
    }

    /** Every query of every panel of the shipped dashboard, with its variables as this test's deployment sets them. */
    private static List<String> dashboardQueries(String input) throws Exception {
        List<String> queries = new ArrayList<>();
        for (JsonNode panel : new ObjectMapper().readTree(DASHBOARD.toFile()).get("panels")) {
            for (JsonNode target : panel.get("targets")) {
                queries.add(target.get("expr").asText().replace("$job", JOB).replace("$input", input)
                        .replace("$__rate_interval", "30s"));
            }
        }
        return queries;
    }

    /** Waits until every query has a series; returns those that still have none after {@code seconds}. */
    private static List<String> awaitNonEmpty(PrometheusServer prometheus, List<String> queries, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<String> empty = new ArrayList<>(queries);
        while (true) {
            empty.removeIf(query -> !prometheus.query(query).isEmpty());
            if (empty.isEmpty() || System.nanoTime() > deadline) {
                return empty;
            }
            Thread.sleep(1000);
        }
    }

    /** The alerts in {@code state} ({@code firing}, {@code pending}; null: any). */
    private static JsonNode alerts(PrometheusServer prometheus, String state) {
        var matching = new ObjectMapper().createArrayNode();
        prometheus.alerts().forEach(alert -> {
            if (state == null || state.equals(alert.get("state").asText())) {
                matching.add(alert);
            }
        });
        return matching;
    }

    private static List<String> names(JsonNode alerts) {
        List<String> names = new ArrayList<>();
        alerts.forEach(alert -> names.add(alert.get("labels").get("alertname").asText()));
        return names;
    }

    private static JsonNode await(Supplier<JsonNode> read, java.util.function.Predicate<JsonNode> accept, long seconds, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            last = read.get();
            if (accept.test(last)) {
                return last;
            }
            Thread.sleep(1000);
        }
        throw new AssertionError(what + ": not within " + seconds + " s; last: " + last);
    }

    private static void produce(String topic) {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int n = 0; n < PER_PARTITION; n++) {
                for (int p = 0; p < 2; p++) {
                    producer.send(new ProducerRecord<>(topic, p, null, ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8)));
                }
            }
            producer.flush();
        }
    }

    private static double restarts(String admin) {
        return PrometheusText.sum(PrometheusText.parse(Http.get("http://" + admin + "/metrics").body()), "snowstamp_stall_restarts_total");
    }

    private static String adminAddress(ChildJvm run) throws Exception {
        run.awaitOutput("admin: http://", 30);
        Matcher m = ADMIN.matcher(run.stdout());
        assertThat(m.find()).as(run.stdout()).isTrue();
        return "127.0.0.1:" + m.group(1);
    }
}
