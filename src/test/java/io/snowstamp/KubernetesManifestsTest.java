package io.snowstamp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.Endpoint;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.snowstamp.admin.AdminServer;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.Durations;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.CleanStopBudget;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathFactory;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The kustomize base in {@code src/main/deploy/kubernetes}, parsed strictly into fabric8's Kubernetes model (a field
 * the model does not know, a typo, fails), and checked against the code: the admin port and health paths the server
 * answers, the settings keys the loader accepts, a grace period that covers {@code --shutdown-timeout}, memory that
 * fits the image's JVM flags, selectors that select, and a PrometheusRule that carries exactly the rules file the
 * promtool tests test. No cluster runs here; {@code kubectl kustomize} renders the base where kubectl is installed.
 */
class KubernetesManifestsTest {
    private static final Path BASE = Path.of("src/main/deploy/kubernetes");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    /** Kind to model class: everything the base may hold. */
    private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of(
            "ConfigMap", ConfigMap.class, "Service", Service.class, "StatefulSet", StatefulSet.class, "Job", Job.class,
            "PodDisruptionBudget", PodDisruptionBudget.class, "ServiceMonitor", ServiceMonitor.class,
            "PrometheusRule", PrometheusRule.class);
    /** The resident set beyond the heap, measured (operations.md#sizing). */
    private static final long NON_HEAP_BYTES = 150L << 20;
    /** What the grace period leaves the JVM to exit after {@code run} returns (no timeout of the code bounds it). */
    private static final Duration JVM_EXIT = Duration.ofSeconds(3);

    private static final Map<String, HasMetadata> resources = new LinkedHashMap<>();

    @BeforeAll
    static void parse() throws Exception {
        for (JsonNode file : kustomization().get("resources")) {
            JsonNode tree = YAML.readTree(BASE.resolve(file.asText()).toFile());
            Class<? extends HasMetadata> type = KINDS.get(tree.path("kind").asText());
            assertThat(type).as(file.asText() + ": kind " + tree.path("kind")).isNotNull();
            HasMetadata resource = YAML.treeToValue(tree, type);
            List<String> unknown = new ArrayList<>();
            unknownFields(resource, file.asText(), unknown);
            assertThat(unknown).as("fields the Kubernetes model does not know").isEmpty();
            resources.put(resource.getKind() + "/" + resource.getMetadata().getName(), resource);
        }
    }

    private static JsonNode kustomization() throws Exception {
        return YAML.readTree(BASE.resolve("kustomization.yaml").toFile());
    }

    @Test
    void shouldListEveryManifestOfTheFolderInTheKustomization() throws Exception {
        List<String> listed = new ArrayList<>();
        kustomization().get("resources").forEach(file -> listed.add(file.asText()));
        try (Stream<Path> files = Files.list(BASE)) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(n -> !n.equals("kustomization.yaml")))
                    .containsExactlyInAnyOrderElementsOf(listed);
        }
        assertThat(resources.keySet()).contains("StatefulSet/snowstamp", "Service/snowstamp", "PodDisruptionBudget/snowstamp",
                "ServiceMonitor/snowstamp", "PrometheusRule/snowstamp", "ConfigMap/snowstamp-settings", "Job/snowstamp-topics");
    }

    @Test
    void shouldProbeTheAdminServersHealthEndpointsOnTheImagesAdminPort() throws Exception {
        Container stamper = stamper();
        ContainerPort admin = stamper.getPorts().get(0);
        assertThat(admin.getContainerPort()).as("the image's SNOWSTAMP_ADMIN_PORT").isEqualTo(Integer.parseInt(jib("environment/SNOWSTAMP_ADMIN_PORT")));
        assertThat(jib("environment/SNOWSTAMP_ADMIN_BIND")).as("reachable from the kubelet").isEqualTo("0.0.0.0");
        assertProbe(stamper.getReadinessProbe(), "/health/ready", admin.getName());
        assertProbe(stamper.getLivenessProbe(), "/health/live", admin.getName());
        assertThat(stamper.getReadinessProbe().getPeriodSeconds()).isLessThan(stamper.getLivenessProbe().getPeriodSeconds());
    }

    private static void assertProbe(Probe probe, String path, String portName) {
        assertThat(AdminServer.ENDPOINTS).contains(path);
        assertThat(probe.getHttpGet().getPath()).isEqualTo(path);
        assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo(portName);
    }

    @Test
    void shouldGiveACleanStopTimeToFinishAndTheJvmMemoryThatFitsTheContainer() throws Exception {
        StatefulSet set = resource("StatefulSet/snowstamp");
        Container stamper = stamper();
        List<String> args = stamper.getArgs();
        assertThat(args.get(0)).isEqualTo(jib("args/arg"));
        Duration shutdown = args.stream().filter(a -> a.startsWith("--shutdown-timeout=")).findFirst()
                .map(a -> Durations.parse(a.substring(a.indexOf('=') + 1))).orElse(Duration.ofSeconds(30));
        long grace = set.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
        // a clean stop's worst case, step by step from the timeouts in the code (a timeout grown there fails here): the
        // stall watch's client, the last IDs, Kafka Streams' close (the timeout), the topology's clients, the registry's
        // release at the manifests' settings, and the JVM's exit
        Duration worstCase = CleanStopBudget.stallWatch().plus(CleanStopBudget.lastIds()).plus(shutdown)
                .plus(CleanStopBudget.topologyClients()).plus(CleanStopBudget.registryRelease(manifestConfig()))
                .plus(JVM_EXIT);
        assertThat(Duration.ofSeconds(grace)).as("terminationGracePeriodSeconds covers the clean stop's worst case")
                .isGreaterThanOrEqualTo(worstCase);

        long limit = bytes(stamper.getResources().getLimits().get("memory"));
        assertThat(bytes(stamper.getResources().getRequests().get("memory"))).as("guaranteed memory").isEqualTo(limit);
        String percent = jib("jvmFlags/jvmFlag").replace("-XX:MaxRAMPercentage=", "");
        long heap = (long) (limit * Double.parseDouble(percent) / 100);
        assertThat(heap + NON_HEAP_BYTES).as("heap (" + percent + " % of the limit) plus what the JVM holds beside it").isLessThanOrEqualTo(limit);
    }

    /**
     * The kubelet's service-link variables ({@code <SERVICE>_SERVICE_HOST}) of a service named {@code snowstamp-...} would
     * start with {@code SNOWSTAMP_}, which the settings refuse as an unknown key: both pods turn them off. And an image
     * loaded into the nodes runs without a pull.
     */
    @Test
    void shouldInjectNoServiceLinksAndPullOnlyAMissingImage() {
        StatefulSet set = resource("StatefulSet/snowstamp");
        Job topics = resource("Job/snowstamp-topics");
        for (io.fabric8.kubernetes.api.model.PodSpec pod : List.of(set.getSpec().getTemplate().getSpec(), topics.getSpec().getTemplate().getSpec())) {
            assertThat(pod.getEnableServiceLinks()).isFalse();
            assertThat(pod.getContainers()).allSatisfy(container -> assertThat(container.getImagePullPolicy()).isEqualTo("IfNotPresent"));
        }
    }

    /** The stamper's environment in the manifests: the ConfigMap's settings and the container's own variables. */
    private static Map<String, String> manifestEnvironment() throws Exception {
        ConfigMap settings = resource("ConfigMap/snowstamp-settings");
        Map<String, String> env = new HashMap<>(settings.getData());
        for (EnvVar var : stamper().getEnv()) {
            if (var.getName().startsWith("SNOWSTAMP_")) {
                env.put(var.getName(), var.getValue().replace("$(POD_NAME)", "snowstamp-0").replace("$(POD_IP)", "10.1.2.3"));
            }
        }
        return env;
    }

    /** The settings the stamper runs with in the manifests. */
    private static SnowstampConfig manifestConfig() throws Exception {
        return ConfigLoader.load(null, manifestEnvironment(), Map.of());
    }

    @Test
    void shouldConfigureWithRealKeysThatLoadAndCredentialsFromASecret() throws Exception {
        ConfigMap settings = resource("ConfigMap/snowstamp-settings");
        Map<String, String> env = manifestEnvironment();
        assertThat(env.keySet()).allSatisfy(name -> assertThat(Keys.fromEnvironmentName(name)).as(name + " names a key").isNotNull());
        SnowstampConfig config = ConfigLoader.load(null, env, Map.of());
        assertThat(config.connection().instanceId()).isEqualTo("snowstamp-0");
        assertThat(config.admin().advertisedHost("ignored")).as("the pod IP: no name a kustomize namePrefix renames").isEqualTo("10.1.2.3");
        assertThat(stamper().getEnv()).filteredOn(var -> var.getName().equals("POD_IP"))
                .singleElement().satisfies(var -> assertThat(var.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("status.podIP"));

        Job topics = resource("Job/snowstamp-topics");
        Container job = topics.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(job.getArgs()).containsExactly("topics", "apply");
        for (List<EnvFromSource> sources : List.of(job.getEnvFrom(), stamper().getEnvFrom())) {
            assertThat(sources.stream().filter(s -> s.getConfigMapRef() != null).map(s -> s.getConfigMapRef().getName()))
                    .containsExactly(settings.getMetadata().getName());
            assertThat(sources.stream().filter(s -> s.getSecretRef() != null).map(s -> s.getSecretRef().getName()))
                    .containsExactly("snowstamp-kafka");
        }
    }

    @Test
    void shouldSelectTheStampersPodsFromTheServiceTheBudgetAndTheMonitor() {
        StatefulSet set = resource("StatefulSet/snowstamp");
        Map<String, String> podLabels = set.getSpec().getTemplate().getMetadata().getLabels();
        Service service = resource("Service/snowstamp");
        PodDisruptionBudget budget = resource("PodDisruptionBudget/snowstamp");
        ServiceMonitor monitor = resource("ServiceMonitor/snowstamp");

        assertThat(podLabels).containsAllEntriesOf(set.getSpec().getSelector().getMatchLabels())
                .containsAllEntriesOf(service.getSpec().getSelector())
                .containsAllEntriesOf(budget.getSpec().getSelector().getMatchLabels());
        // a deployment's own label in every selector: a second deployment in the namespace (its overlay sets another value)
        // selects none of these pods, nor these selectors its pods
        for (Map<String, String> selector : List.of(set.getSpec().getSelector().getMatchLabels(), service.getSpec().getSelector(),
                budget.getSpec().getSelector().getMatchLabels(), monitor.getSpec().getSelector().getMatchLabels())) {
            assertThat(selector).containsEntry("app.kubernetes.io/instance", "snowstamp");
        }
        assertThat(set.getSpec().getServiceName()).isEqualTo(service.getMetadata().getName());
        assertThat(service.getSpec().getClusterIP()).as("headless: one DNS name per pod").isEqualTo("None");
        ServicePort port = service.getSpec().getPorts().get(0);
        assertThat(port.getTargetPort().getStrVal()).isEqualTo(stamper().getPorts().get(0).getName());
        assertThat(service.getMetadata().getLabels()).containsAllEntriesOf(monitor.getSpec().getSelector().getMatchLabels());
        Endpoint endpoint = monitor.getSpec().getEndpoints().get(0);
        assertThat(endpoint.getPort()).isEqualTo(port.getName());
        assertThat(endpoint.getPath()).isEqualTo("/metrics").isIn(AdminServer.ENDPOINTS);
        assertThat(budget.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
    }

    @Test
    void shouldCarryExactlyTheRulesFileThePromtoolTestsTest() throws Exception {
        PrometheusRule rule = resource("PrometheusRule/snowstamp");
        JsonNode shipped = YAML.readTree(PromtoolRulesTest.RULES.toFile());
        JsonNode carried = YAML.valueToTree(rule.getSpec());
        assertThat(carried).isEqualTo(shipped);
    }

    @Test
    void shouldRenderWithKubectlKustomize() throws Exception {
        List<JsonNode> rendered = kustomize(BASE);
        assertThat(rendered.stream().map(doc -> doc.path("kind").asText() + "/" + doc.at("/metadata/name").asText()))
                .containsExactlyInAnyOrderElementsOf(resources.keySet());
    }

    /**
     * Two deployments in one namespace (operations.md, On Kubernetes): the overlay there, with its own name prefix,
     * application id and {@code app.kubernetes.io/instance}, and without a second copy of the rules, selects its own pods only — from its StatefulSet, Service, budget (a pod under two
     * budgets cannot be evicted) and monitor (a pod scraped under two jobs) — never the other deployment's.
     */
    @Test
    void shouldLetASecondDeploymentInTheSameNamespaceSelectOnlyItsOwnPods(@org.junit.jupiter.api.io.TempDir Path overlay) throws Exception {
        Files.writeString(overlay.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources:
                  - %s
                namePrefix: blue-
                labels:
                  - pairs:
                      app.kubernetes.io/instance: blue
                    includeSelectors: true
                    fields:
                      - path: spec/selector/matchLabels
                        kind: ServiceMonitor
                patches:
                  - target: {kind: ConfigMap, name: snowstamp-settings}
                    patch: |-
                      - op: replace
                        path: /data/SNOWSTAMP_APPLICATION_ID
                        value: blue
                  - patch: |-
                      $patch: delete
                      apiVersion: monitoring.coreos.com/v1
                      kind: PrometheusRule
                      metadata:
                        name: snowstamp
                """.formatted(overlay.toAbsolutePath().relativize(BASE.toAbsolutePath())));
        List<JsonNode> rendered = kustomize(overlay);
        assertThat(rendered).filteredOn(doc -> doc.path("kind").asText().equals("ConfigMap")).singleElement()
                .satisfies(doc -> assertThat(doc.at("/data/SNOWSTAMP_APPLICATION_ID").asText()).as("a group of its own").isEqualTo("blue"));
        assertThat(rendered).as("the rules once per Prometheus: the first deployment's").noneMatch(doc -> doc.path("kind").asText().equals("PrometheusRule"));
        for (String pointer : List.of("/spec/selector/matchLabels", "/spec/template/metadata/labels")) {
            assertThat(rendered).filteredOn(doc -> doc.path("kind").asText().equals("StatefulSet")).singleElement()
                    .satisfies(doc -> assertThat(doc.at(pointer + "/app.kubernetes.io~1instance").asText()).as(pointer).isEqualTo("blue"));
        }
        for (String kind : List.of("Service", "PodDisruptionBudget", "ServiceMonitor")) {
            String pointer = kind.equals("Service") ? "/spec/selector" : "/spec/selector/matchLabels";
            assertThat(rendered).filteredOn(doc -> doc.path("kind").asText().equals(kind)).singleElement()
                    .satisfies(doc -> assertThat(doc.at(pointer + "/app.kubernetes.io~1instance").asText()).as(kind).isEqualTo("blue"));
        }
    }

    /** The documents {@code kubectl kustomize dir} renders (skips where kubectl is not installed). */
    private static List<JsonNode> kustomize(Path dir) throws Exception {
        Path kubectl = Stream.of(System.getenv().getOrDefault("PATH", "").split(":")).map(d -> Path.of(d, "kubectl"))
                .filter(Files::isExecutable).findFirst().orElse(null);
        Assumptions.assumeTrue(kubectl != null, "kubectl is not installed: the base is not rendered here");
        Process process = new ProcessBuilder(kubectl.toString(), "kustomize", dir.toString()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        List<JsonNode> docs = new ArrayList<>();
        YAML.readerFor(JsonNode.class).readValues(YAML.getFactory().createParser(output)).forEachRemaining(doc -> docs.add((JsonNode) doc));
        return docs;
    }

    private static Container stamper() {
        StatefulSet set = resource("StatefulSet/snowstamp");
        PodSpec pod = set.getSpec().getTemplate().getSpec();
        assertThat(pod.getContainers()).hasSize(1);
        return pod.getContainers().get(0);
    }

    @SuppressWarnings("unchecked")
    private static <T extends HasMetadata> T resource(String key) {
        assertThat(resources).containsKey(key);
        return (T) resources.get(key);
    }

    private static long bytes(Quantity quantity) {
        return Quantity.getAmountInBytes(quantity).setScale(0, java.math.RoundingMode.UNNECESSARY).longValueExact();
    }

    /** A value of the image's Jib configuration in pom.xml, e.g. {@code environment/SNOWSTAMP_ADMIN_PORT}. */
    private static String jib(String path) throws Exception {
        Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile());
        return XPathFactory.newInstance().newXPath().evaluate(
                "/project/profiles/profile[id='image']/build/plugins/plugin[artifactId='jib-maven-plugin']/configuration/container/" + path, pom);
    }

    /**
     * Every field fabric8 kept aside as unknown (its models take unknown fields into {@code additionalProperties}
     * instead of failing), anywhere in the tree.
     */
    private static void unknownFields(Object node, String path, List<String> found) throws Exception {
        if (node instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                unknownFields(item, path + "[" + i++ + "]", found);
            }
        } else if (node instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                unknownFields(entry.getValue(), path + "." + entry.getKey(), found);
            }
        } else if (node != null && node.getClass().getName().startsWith("io.fabric8.") && !(node instanceof Quantity)) {
            for (Method getter : node.getClass().getMethods()) {
                if (getter.getParameterCount() != 0 || !getter.getName().startsWith("get") || getter.getDeclaringClass() == Object.class) {
                    continue;
                }
                Object value = getter.invoke(node);
                if (getter.getName().equals("getAdditionalProperties")) {
                    if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
                        found.add(path + ": " + extra.keySet());
                    }
                } else {
                    unknownFields(value, path + "." + getter.getName().substring(3), found);
                }
            }
        }
    }
}
