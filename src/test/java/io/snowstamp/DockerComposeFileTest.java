package io.snowstamp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docker-compose.yml, parsed: the services, images and start order, and every SNOWSTAMP_*
 * variable a real configuration key that loads. {@code it.DockerComposeIT} runs it where Docker exists.
 */
class DockerComposeFileTest {
    private static JsonNode compose;
    private static JsonNode services;

    @BeforeAll
    static void parse() throws Exception {
        compose = new ObjectMapper(new YAMLFactory()).readTree(Path.of("docker-compose.yml").toFile());
        services = compose.get("services");
    }

    private static Map<String, String> environment(String service) {
        Map<String, String> env = new LinkedHashMap<>();
        services.get(service).get("environment").fields().forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
        return env;
    }

    private static List<String> list(JsonNode node) {
        List<String> values = new ArrayList<>();
        node.forEach(value -> values.add(value.asText()));
        return values;
    }

    /** The image the {@code image} profile builds: Jib's {@code to.image}, tagged latest by default. */
    private static String jibImage() throws Exception {
        Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile());
        return XPathFactory.newInstance().newXPath().evaluate(
                "/project/profiles/profile[id='image']/build/plugins/plugin[artifactId='jib-maven-plugin']/configuration/to/image", pom);
    }

    @Test
    void shouldRunABrokerATopicsJobAndTheStamper() {
        List<String> names = new ArrayList<>();
        services.fieldNames().forEachRemaining(names::add);

        assertThat(names).containsExactly("kafka", "topics", "snowstamp", "schema-registry", "prometheus", "grafana");
        assertThat(list(services.at("/schema-registry/profiles"))).as("not part of a plain 'docker compose up'").containsExactly("avro");
    }

    @Test
    void shouldCarryACommentedAvroRunThatLoadsAndReachesTheRegistryService() throws Exception {
        Map<String, String> env = environment("snowstamp");
        for (String line : java.nio.file.Files.readAllLines(Path.of("docker-compose.yml"))) {
            java.util.regex.Matcher commented = java.util.regex.Pattern.compile("^\\s+# (SNOWSTAMP_[A-Z_]+): (\\S+)$").matcher(line);
            if (commented.matches()) {
                env.put(commented.group(1), commented.group(2));
            }
        }
        SnowstampConfig config = ConfigLoader.load(null, env, Map.of());

        assertThat(config.stamp().valueFormat()).isEqualTo(io.snowstamp.config.StampSettings.ValueFormat.AVRO);
        assertThat(config.schemaRegistry().urls()).containsExactly(java.net.URI.create("http://schema-registry:8080/apis/ccompat/v7"));
        assertThat(services.at("/schema-registry/image").asText()).startsWith("apicurio/apicurio-registry:3.");
        assertThat(list(services.at("/schema-registry/ports"))).containsExactly("8081:8080");
    }

    @Test
    void shouldRunPrometheusAndGrafanaWithTheShippedFilesOnlyInTheMonitoringProfile() throws Exception {
        for (String service : List.of("prometheus", "grafana")) {
            assertThat(list(services.at("/" + service + "/profiles"))).as(service).containsExactly("monitoring");
            assertThat(list(services.at("/" + service + "/volumes"))).as(service).isNotEmpty().allSatisfy(volume -> {
                String source = volume.substring(0, volume.indexOf(':'));
                assertThat(Path.of(source)).as(volume).exists();
            });
        }
        assertThat(list(services.at("/prometheus/volumes")))
                .contains("./src/main/deploy/prometheus/snowstamp-rules.yml:/etc/prometheus/snowstamp-rules.yml:ro");
        JsonNode prometheus = new ObjectMapper(new YAMLFactory()).readTree(Path.of("src/main/deploy/prometheus/prometheus-compose.yml").toFile());
        assertThat(prometheus.at("/rule_files/0").asText()).isEqualTo("/etc/prometheus/snowstamp-rules.yml");
        assertThat(prometheus.at("/scrape_configs/0/job_name").asText()).as("the job the rules select on").isEqualTo("snowstamp");
        assertThat(prometheus.at("/scrape_configs/0/static_configs/0/targets/0").asText())
                .isEqualTo("snowstamp:" + environment("snowstamp").get("SNOWSTAMP_ADMIN_PORT"));
        JsonNode datasource = new ObjectMapper(new YAMLFactory())
                .readTree(Path.of("src/main/deploy/grafana/provisioning/datasources/prometheus.yml").toFile());
        assertThat(datasource.at("/datasources/0/url").asText()).isEqualTo("http://prometheus:" + list(services.at("/prometheus/ports")).get(0).split(":")[1]);
    }

    @Test
    void shouldRunTheOfficialKafkaImageAsASingleKraftNode() {
        JsonNode kafka = services.get("kafka");
        Map<String, String> env = environment("kafka");

        assertThat(kafka.get("image").asText()).isEqualTo("apache/kafka:4.3.1");
        assertThat(env.get("KAFKA_PROCESS_ROLES")).isEqualTo("broker,controller");
        assertThat(env.get("KAFKA_CONTROLLER_QUORUM_VOTERS")).isEqualTo(env.get("KAFKA_NODE_ID") + "@kafka:9093");
        assertThat(env.get("KAFKA_ADVERTISED_LISTENERS")).contains("PLAINTEXT://kafka:9092", "HOST://localhost:29092");
        assertThat(list(kafka.get("ports"))).contains("29092:29092");
        assertThat(env).containsEntry("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1")
                .containsEntry("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "1")
                .containsEntry("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1");
        assertThat(kafka.has("healthcheck")).as("the topics job waits for a healthy broker").isTrue();
    }

    @Test
    void shouldApplyTheTopicsOnceTheBrokerIsHealthyThenStartTheStamper() throws Exception {
        JsonNode topics = services.get("topics");
        JsonNode snowstamp = services.get("snowstamp");
        String image = jibImage() + ":latest";

        assertThat(topics.get("image").asText()).isEqualTo(image);
        assertThat(snowstamp.get("image").asText()).isEqualTo(image);
        assertThat(list(topics.get("command"))).containsExactly("topics", "apply");
        assertThat(topics.at("/depends_on/kafka/condition").asText()).isEqualTo("service_healthy");
        assertThat(topics.get("restart").asText()).isEqualTo("no");
        assertThat(list(snowstamp.get("command"))).containsExactly("run");
        assertThat(snowstamp.at("/depends_on/topics/condition").asText()).isEqualTo("service_completed_successfully");
    }

    @Test
    void shouldConfigureSnowstampOnlyWithRealKeysThatLoad() {
        for (String service : List.of("topics", "snowstamp")) {
            Map<String, String> env = environment(service);
            assertThat(env.keySet()).as(service).allSatisfy(name -> {
                assertThat(name).startsWith("SNOWSTAMP_");
                assertThat(Keys.fromEnvironmentName(name)).as(name + " names a configuration key").isNotNull();
            });
            SnowstampConfig config = ConfigLoader.load(null, env, Map.of());
            assertThat(config.connection().kafka()).as(service).containsEntry("bootstrap.servers", "kafka:9092");
        }
    }

    @Test
    void shouldPublishTheAdminPortOnEveryInterfaceOfTheContainer() {
        JsonNode snowstamp = services.get("snowstamp");
        SnowstampConfig config = ConfigLoader.load(null, environment("snowstamp"), Map.of());

        assertThat(config.admin().enabled()).isTrue();
        assertThat(config.admin().bind()).as("127.0.0.1 inside a container is unreachable from outside").isEqualTo("0.0.0.0");
        assertThat(config.admin().advertisedHost("container-id")).as("other containers reach it by service name").isEqualTo("snowstamp");
        assertThat(list(snowstamp.get("ports"))).contains(config.admin().port() + ":" + config.admin().port());
        assertThat(config.connection().instanceId()).as("a fixed instance id keeps the state directory across container re-creation")
                .isEqualTo("snowstamp-1");
        assertThat(list(snowstamp.at("/healthcheck/test"))).last().asString().contains("/dev/tcp/127.0.0.1/" + config.admin().port(),
                "/health/ready");
    }

    @Test
    void shouldGiveTheStamperTimeToCommitOnStopAndKeepItsState() {
        JsonNode snowstamp = services.get("snowstamp");

        assertThat(snowstamp.get("stop_grace_period").asText()).as("the clean stop's worst case, as the StatefulSet's grace period").isEqualTo("100s");
        assertThat(list(snowstamp.get("volumes"))).containsExactly("snowstamp-data:/var/lib/snowstamp");
        assertThat(compose.get("volumes").has("snowstamp-data")).isTrue();
    }
}
