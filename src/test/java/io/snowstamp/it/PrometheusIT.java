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
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped alert rules and Grafana dashboard against a real Prometheus (Debian's {@code prometheus} package, started
 * on loopback with a configuration this test writes) scraping a real stamper on the shared broker under a job name of
 * its own and a {@code namespace} label, as Kubernetes service discovery adds one. First, every rule's expression
 * answers with series from the real scrape ({@link #evaluable}: the real expression, its thresholds made non-filtering)
 * and every query of every dashboard panel has a series — a renamed metric or a grouping label that does not match
 * fails here, not on an operator's night — and every rule evaluates without error. Then a real stall: the stamper's first
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
    /** A dashboard variable's query: {@code label_values(selector, label)}. */
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\((.+),\\s*(\\w+)\\)");
    private static final Pattern ADMIN = Pattern.compile("admin: http://127\\.0\\.0\\.1:(\\d+)");
    /** A comparison of PromQL not already followed by {@code bool} (label matchers aside: see {@link #evaluable}). */
    private static final Pattern COMPARISON = Pattern.compile("(==|!=|>=|<=|>|<)(?!\\s*bool\\b)");
    /** Not the dashboard's default: the rules must take any job name (a kustomize namePrefix renames it). */
    private static final String JOB = "blue-snowstamp";
    private static final Map<String, String> TARGET_LABELS = Map.of("namespace", "it");
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
            try (PrometheusServer prometheus = PrometheusServer.start(work.resolve("prometheus"), JOB, List.of(admin), TARGET_LABELS, List.of(RULES))) {
                produce(topics.in());

                List<String> selectors = ruleExpressions();
                List<String> panels = dashboardQueries(topics.in(), stamper.applicationId());
                List<String> queries = new ArrayList<>(selectors);
                queries.addAll(panels);
                List<String> empty = awaitNonEmpty(prometheus, queries, 90);
                assertThat(empty).as("queries without a series from a real scrape").isEmpty();
                assertThat(prometheus.query("snowstamp_ready")).as("the labels the rules tell deployments apart by")
                        .allSatisfy(series -> assertThat(series.get("metric").get("application").asText()).isNotBlank());
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
                System.out.printf("PrometheusIT: %d rule expressions and %d dashboard queries answered; %s firing %d s"
                        + " after the stamper started, gone after %d s%n", selectors.size(), panels.size(), STALLED, toFiring, toResolved);
                assertThat(broker.consume(topics.out(), 2 * PER_PARTITION, Duration.ofSeconds(60))).as(child.logs())
                        .hasSize(2 * PER_PARTITION);
                assertThat(restarts(admin)).isEqualTo(1.0);
            }
        }
    }

    /**
     * Every rule of the shipped rules file as {@link #evaluable}, each operand of a top-level {@code or} on its own (an
     * {@code or} answers when either side does: each side must).
     */
    private static List<String> ruleExpressions() throws Exception {
        List<String> expressions = new ArrayList<>();
        for (JsonNode group : new ObjectMapper(new YAMLFactory()).readTree(RULES.toFile()).get("groups")) {
            for (JsonNode rule : group.get("rules")) {
                expressions.addAll(topLevelOr(evaluable(rule.get("expr").asText())));
            }
        }
        assertThat(expressions).as("rules").hasSizeGreaterThan(10);
        return expressions;
    }

    /**
     * A rule's expression that answers on a healthy scrape: the real one, every selector, range, function, aggregation
     * and {@code by}/{@code on} clause kept, with two changes that only stop it filtering. Each comparison gets
     * {@code bool}: it answers every series its operands match, valued 0 or 1, instead of only those past the threshold
     * (thresholds are what the promtool tests test). Each {@code unless} becomes {@code and}: {@code A and on (L) B} is
     * exactly the part of {@code A} that {@code A unless on (L) B} removes, so a series here proves the real rule's match
     * labels find their partner — a rule silent only because its labels never match ({@code up} without the namespace
     * the other side has, say) answers nothing here. A series therefore proves that every operand of the real expression
     * answers and that its groupings and matches line up. An {@code offset} goes too: this run's data reaches back a few
     * minutes only. Label matchers ({@code {...}}) are left as they are.
     */
    private static List<String> topLevelOr(String expr) {
        List<String> operands = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < expr.length(); i++) {
            char c = expr.charAt(i);
            if (c == '(' || c == '{' || c == '[') {
                depth++;
            } else if (c == ')' || c == '}' || c == ']') {
                depth--;
            } else if (depth == 0 && expr.startsWith("or", i) && (i == 0 || !nameChar(expr.charAt(i - 1)))
                    && (i + 2 == expr.length() || !nameChar(expr.charAt(i + 2)))) {
                operands.add(expr.substring(start, i).trim());
                start = i + 2;
            }
        }
        operands.add(expr.substring(start).trim());
        return operands;
    }

    private static boolean nameChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == ':';
    }

    static String evaluable(String expr) {
        StringBuilder out = new StringBuilder();
        int from = 0;
        while (from < expr.length()) {
            int open = expr.indexOf('{', from);
            int end = open < 0 ? expr.length() : open;
            out.append(COMPARISON.matcher(expr.substring(from, end)).replaceAll("$1 bool")
                    .replaceAll("\\bunless\\b", "and").replaceAll("\\boffset\\s+\\d+[smhdwy]+", ""));
            if (open < 0) {
                break;
            }
            int close = expr.indexOf('}', open);
            out.append(expr, open, close + 1);
            from = close + 1;
        }
        return out.toString();
    }

    /**
     * Every query of every panel of the shipped dashboard, with its variables as this test's deployment sets them: the
     * application picked by name (every series must carry it), no namespace (outside Kubernetes: "All").
     */
    private static List<String> dashboardQueries(String input, String application) throws Exception {
        List<String> queries = new ArrayList<>();
        JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
        // the variables' own queries (label_values(selector, label)): the selector has series carrying the label
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            Matcher values = LABEL_VALUES.matcher(variable.path("definition").asText());
            if (variable.path("type").asText().equals("query") && values.matches()) {
                queries.add(("count by (" + values.group(2) + ") (" + values.group(1) + ")").replace("$job", JOB)
                        .replace("$namespace", ".*"));
            } else {
                assertThat(variable.path("type").asText()).as("variable %s: a query is label_values(selector, label)",
                        variable.path("name").asText()).isNotEqualTo("query");
            }
        }
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.get("targets")) {
                queries.add(target.get("expr").asText().replace("$job", JOB).replace("$input", input)
                        .replace("$namespace", ".*").replace("$application", application)
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
