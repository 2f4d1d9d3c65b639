package io.snowstamp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.snowstamp.testing.PrometheusTools;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped alert rules ({@code src/main/deploy/prometheus/snowstamp-rules.yml}) under the real {@code promtool}:
 * the file loads, its unit tests ({@code src/test/resources/prometheus/snowstamp-rules-test.yml}) pass, every rule is
 * tested firing, and every rule tells what to do: a summary, a description and a runbook section that exists.
 */
class PromtoolRulesTest {
    /** The rules every deployment loads (the PrometheusRule of the Kubernetes manifests carries the same file). */
    static final Path RULES = Path.of("src/main/deploy/prometheus/snowstamp-rules.yml");
    private static final Path TESTS = Path.of("src/test/resources/prometheus/snowstamp-rules-test.yml");
    private static final Path RUNBOOKS = Path.of("src/site/markdown");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @Test
    void shouldPassPromtoolsCheckAndUnitTests() throws Exception {
        Path promtool = PrometheusTools.require("promtool");
        assertThat(run(promtool.toString(), "check", "rules", RULES.toString())).contains("SUCCESS: " + rules().size() + " rules found");
        assertThat(run(promtool.toString(), "test", "rules", TESTS.toString())).contains("SUCCESS");
    }

    /** Every rule has a case where it fires and one where it stays quiet (a rule that always fires would pass the first). */
    @Test
    void shouldTestEveryRuleFiringAndStayingQuiet() throws IOException {
        Set<String> firing = new TreeSet<>();
        Set<String> quiet = new TreeSet<>();
        for (JsonNode test : YAML.readTree(TESTS.toFile()).get("tests")) {
            for (JsonNode check : test.path("alert_rule_test")) {
                (check.path("exp_alerts").isEmpty() ? quiet : firing).add(check.get("alertname").asText());
            }
        }
        List<String> names = rules().stream().map(r -> r.get("alert").asText()).toList();
        assertThat(firing).as("rules with a firing case").containsExactlyInAnyOrderElementsOf(names);
        assertThat(quiet).as("rules with a quiet case").containsExactlyInAnyOrderElementsOf(names);
    }

    /**
     * Two deployments (namespaces, application.ids, kustomize name prefixes) must not hide each other's alerts: no rule
     * names a job, every aggregation keeps the labels that tell deployments apart, every match compares them
     * ({@code up} carries no application label: its matches need the namespace and job only).
     */
    @Test
    void shouldTellDeploymentsApartUnderAnyJobName() throws IOException {
        Pattern grouping = Pattern.compile("\\b(by|on)\\s*\\(([^)]*)\\)");
        for (JsonNode rule : rules()) {
            String name = rule.get("alert").asText();
            String expr = rule.get("expr").asText();
            assertThat(expr).as(name + ": a job name").doesNotContainPattern("\\bjob\\s*!?[=~]");
            Matcher m = grouping.matcher(expr);
            while (m.find()) {
                List<String> labels = List.of(m.group(2).replace(" ", "").split(","));
                assertThat(labels).as(name + ": " + m.group()).contains("namespace", "job");
                if (m.group(1).equals("by")) {
                    assertThat(labels).as(name + ": " + m.group()).contains("application");
                }
            }
        }
    }

    @Test
    void shouldTellWhatToDoAndLinkAnExistingRunbookSection() throws IOException {
        Pattern link = Pattern.compile("src/site/markdown/([a-z-]+\\.md)#([a-z0-9-]+)");
        for (JsonNode rule : rules()) {
            String name = rule.get("alert").asText();
            JsonNode annotations = rule.get("annotations");
            assertThat(annotations.path("summary").asText()).as(name).isNotBlank();
            assertThat(annotations.path("description").asText()).as(name).isNotBlank();
            assertThat(rule.path("labels").path("severity").asText()).as(name).isIn("critical", "warning");
            Matcher m = link.matcher(annotations.path("runbook_url").asText());
            assertThat(m.matches()).as(name + " runbook_url").isTrue();
            assertThat(DocsTest.anchors(RUNBOOKS.resolve(m.group(1)))).as(name + " runbook section").contains(m.group(2));
        }
    }

    /** The alerting rules of the shipped file, in order. */
    static List<JsonNode> rules() throws IOException {
        List<JsonNode> rules = new ArrayList<>();
        for (JsonNode group : YAML.readTree(RULES.toFile()).get("groups")) {
            group.get("rules").forEach(rules::add);
        }
        return rules;
    }

    private static String run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as(String.join(" ", command) + " within 60 s").isTrue();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(String.join(" ", command) + "\n" + output).isZero();
        return output;
    }
}
