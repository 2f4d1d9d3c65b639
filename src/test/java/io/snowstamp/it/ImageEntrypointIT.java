package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The container image's command, run as a plain process against a real broker, since no image can
 * be pulled or run here. The entrypoint, default arguments and environment come from the Jib
 * configuration of the {@code image} profile in pom.xml (Jib's classpath entrypoint:
 * {@code java [jvmFlags] -cp @/app/jib-classpath-file MAIN ARGS}), with the classpath pointing at
 * the shaded jar (the same classes and libraries) and the container's paths and fixed port replaced
 * by temporary ones. When {@code target/jib-image.tar} exists (built offline by
 * {@code .ci/image-offline.sh}), a second test runs the image's own layers with its own config.
 */
@Tag("integration")
@Timeout(180)
class ImageEntrypointIT extends OnSharedBroker {
    private static final Pattern ADMIN = Pattern.compile("admin: http://[^:]+:(\\d+)");
    private static final String CLASSPATH_FILE = "@/app/jib-classpath-file";
    @TempDir
    Path work;

    /** What the image runs: entrypoint + arguments (Docker's Entrypoint and Cmd), environment, working directory. */
    record Image(List<String> entrypoint, List<String> args, Map<String, String> environment, String workingDir) {
    }

    /** The image as pom.xml's Jib configuration defines it. */
    static Image fromPom() throws Exception {
        Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile());
        Element container = (Element) XPathFactory.newInstance().newXPath().evaluate(
                "/project/profiles/profile[id='image']/build/plugins/plugin[artifactId='jib-maven-plugin']/configuration/container",
                pom, XPathConstants.NODE);
        assertThat(container).as("the image profile configures Jib's container").isNotNull();
        List<String> entrypoint = new ArrayList<>(List.of("java"));
        entrypoint.addAll(texts(container, "jvmFlags"));
        entrypoint.addAll(List.of("-cp", CLASSPATH_FILE, text(container, "mainClass")));
        Map<String, String> environment = new LinkedHashMap<>();
        NodeList variables = ((Element) container.getElementsByTagName("environment").item(0)).getChildNodes();
        for (int i = 0; i < variables.getLength(); i++) {
            if (variables.item(i) instanceof Element variable) {
                environment.put(variable.getTagName(), variable.getTextContent().trim());
            }
        }
        assertThat(text(container, "user")).as("the image runs as a non-root user").doesNotStartWith("0").isNotEqualTo("root");
        return new Image(entrypoint, texts(container, "args"), environment, text(container, "workingDirectory"));
    }

    private static String text(Element parent, String tag) {
        return parent.getElementsByTagName(tag).item(0).getTextContent().trim();
    }

    private static List<String> texts(Element parent, String tag) {
        List<String> values = new ArrayList<>();
        NodeList children = parent.getElementsByTagName(tag).item(0).getChildNodes();
        for (int i = 0; i < children.getLength(); i++) {
            Node child = children.item(i);
            if (child instanceof Element) {
                values.add(child.getTextContent().trim());
            }
        }
        return values;
    }

    @Test
    void shouldStampWithTheImagesEntrypointArgumentsAndEnvironment() throws Exception {
        Image image = fromPom();
        assertThat(image.entrypoint()).containsSubsequence("java", "-cp", CLASSPATH_FILE, "io.snowstamp.cli.Main");
        assertThat(image.args()).containsExactly("run");
        assertThat(image.environment()).containsKeys("SNOWSTAMP_ADMIN_PORT", "SNOWSTAMP_ADMIN_BIND", "SNOWSTAMP_STATE_DIR");
        Path classpath = work.resolve("jib-classpath-file");
        Files.writeString(classpath, ChildJvm.jar().toAbsolutePath().toString());

        runAndVerify(image, classpath);
    }

    @Test
    void shouldStampWithTheBuiltImageTarball() throws Exception {
        Path tarball = Path.of("target/jib-image.tar");
        Assumptions.assumeTrue(Files.exists(tarball), "no target/jib-image.tar: build it with .ci/image-offline.sh");
        Path root = work.resolve("image-root");
        Image image = extract(tarball, root);
        assertThat(image).isEqualTo(new Image(fromPom().entrypoint(), fromPom().args(), image.environment(), fromPom().workingDir()));
        assertThat(image.environment()).containsAllEntriesOf(fromPom().environment());
        // the image's own classpath file, its /app paths moved to where the layers were unpacked
        Path classpath = work.resolve("jib-classpath-file");
        Files.writeString(classpath, Files.readString(root.resolve("app/jib-classpath-file")).trim()
                .replace("/app/", root.resolve("app").toAbsolutePath() + "/"));

        runAndVerify(image, classpath);
    }

    /** Unpacks the layers of a {@code docker save} tarball (Jib's buildTar) and returns its config. */
    private static Image extract(Path tarball, Path root) throws Exception {
        Path unpacked = root.resolveSibling("tarball");
        Files.createDirectories(unpacked);
        Files.createDirectories(root);
        exec(List.of("tar", "-xf", tarball.toAbsolutePath().toString(), "-C", unpacked.toString()));
        ObjectMapper json = new ObjectMapper();
        JsonNode manifest = json.readTree(unpacked.resolve("manifest.json").toFile()).get(0);
        for (JsonNode layer : manifest.get("Layers")) {
            exec(List.of("tar", "-xzf", unpacked.resolve(layer.asText()).toString(), "-C", root.toString()));
        }
        JsonNode config = json.readTree(unpacked.resolve(manifest.get("Config").asText()).toFile()).get("config");
        List<String> entrypoint = new ArrayList<>();
        config.get("Entrypoint").forEach(node -> entrypoint.add(node.asText()));
        List<String> args = new ArrayList<>();
        config.get("Cmd").forEach(node -> args.add(node.asText()));
        Map<String, String> environment = new LinkedHashMap<>();
        config.get("Env").forEach(node -> {
            String[] pair = node.asText().split("=", 2);
            if (pair[0].startsWith("SNOWSTAMP_")) {
                environment.put(pair[0], pair[1]);
            }
        });
        assertThat(config.get("User").asText()).startsWith("65532");
        return new Image(entrypoint, args, environment, config.get("WorkingDir").asText());
    }

    private static void exec(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (InputStream out = process.getInputStream()) {
            String text = new String(out.readAllBytes());
            assertThat(process.waitFor(60, TimeUnit.SECONDS) && process.exitValue() == 0).as(command + ": " + text).isTrue();
        }
    }

    /**
     * Runs the image's command with its environment plus what docker-compose.yml adds (bootstrap
     * servers, topics), the container's state directory and fixed admin port replaced, then checks
     * the admin server, stamps 1,000 records, verifies them and stops the process with SIGTERM.
     */
    private void runAndVerify(Image image, Path classpath) throws Exception {
        String in = TestBroker.unique("raw");
        String out = TestBroker.unique("stamped");
        String dlq = TestBroker.unique("dlq");
        broker.createTopic(in, 4);
        broker.createTopic(out, 4);
        broker.createTopic(dlq, 1);
        Map<String, String> environment = new LinkedHashMap<>(image.environment());
        environment.put("SNOWSTAMP_STATE_DIR", work.resolve("var-lib-snowstamp/streams").toString());
        environment.put("SNOWSTAMP_ADMIN_PORT", "0");
        environment.put("SNOWSTAMP_KAFKA_BOOTSTRAP_SERVERS", broker.bootstrapServers());
        String app = TestBroker.unique("app");
        environment.put("SNOWSTAMP_APPLICATION_ID", app);
        // the worker registry on, as shipped, in an ID space of the application's own (the broker is shared: see Stamper)
        Stamper.ensureRegistryTopic(broker.bootstrapServers(), "snowstamp-workers");
        environment.put("SNOWSTAMP_ID_SPACE", app);
        environment.put("SNOWSTAMP_INSTANCE_ID", "image-1");
        environment.put("SNOWSTAMP_INPUT_TOPIC", in);
        environment.put("SNOWSTAMP_OUTPUT_TOPIC", out);
        environment.put("SNOWSTAMP_DLQ_TOPIC", dlq);
        List<String> command = new ArrayList<>();
        for (String part : image.entrypoint()) {
            command.add(part.equals("java") ? ChildJvm.java() : part.equals(CLASSPATH_FILE) ? "@" + classpath : part);
        }
        command.addAll(image.args());

        try (ChildJvm run = ChildJvm.startCommand(work.resolve("logs"), "image", work.resolve("var-lib-snowstamp"), environment, command)) {
            run.awaitOutput("stamping " + in, 90);
            Matcher admin = ADMIN.matcher(run.stdout());
            assertThat(admin.find()).as(run.logs()).isTrue();
            String base = "http://127.0.0.1:" + admin.group(1);
            Http.await(base + "/health/ready", r -> r.status() == 200, 120);

            broker.produce(in, 0, 1_000);
            Cli.Result verify = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (System.nanoTime() < deadline) {
                verify = Cli.run("verify", "--bootstrap-servers", broker.bootstrapServers(), "--topic", out, "--source", in);
                if (verify.exitCode() == 0 && verify.lastLine().startsWith("records=1000 ")) {
                    break;
                }
                Thread.sleep(500);
            }
            assertThat(verify.lastLine()).as(verify + "\n" + run.logs()).isEqualTo("records=1000 duplicates=0 missing=0 extra=0");
            assertThat(io.snowstamp.testing.PrometheusText.parse(Http.get(base + "/metrics").body()))
                    .anySatisfy(s -> assertThat(s).extracting(io.snowstamp.testing.PrometheusText.Sample::name, sample -> sample.labels().get("partition"),
                            sample -> sample.labels().get("worker")).containsExactly("snowstamp_ids_issued_total", "0", "0"));
            assertThat(run.terminate(60)).as(run.logs()).isIn(0, 143);
            assertThat(run.logs()).contains("stamper stopped cleanly").doesNotContain("ERROR");
        }
    }
}
