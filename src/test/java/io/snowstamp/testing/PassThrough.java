package io.snowstamp.testing;

import io.snowstamp.bench.BenchTopologies;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.KafkaSettings;
import org.apache.kafka.streams.KafkaStreams;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * What a stall costs without snowstamp: a Kafka Streams application that copies its input to its
 * output (the bench's ceiling topology: no ID, no header, no lease) with the stamper's shipped Kafka
 * settings and guarantee, run as a child process beside the stampers of a fault test, so that a
 * fault's stall can be read against the one Kafka Streams itself takes under the same fault.
 * {@code java -cp <test class path> io.snowstamp.testing.PassThrough KEY=VALUE...}: the stamper's
 * own setting keys ({@code kafka.bootstrap.servers}, {@code application.id}, {@code input.topic},
 * {@code output.topic}, {@code processing.guarantee}, {@code state.dir}, {@code instance.id}, ...).
 */
public final class PassThrough {
    /** Printed on stdout once Kafka Streams runs. */
    public static final String RUNNING = "passing through ";

    private PassThrough() {
    }

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> settings = new LinkedHashMap<>();
        for (String arg : args) {
            settings.put(arg.substring(0, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
        }
        SnowstampConfig config = ConfigLoader.load(null, Map.of(), settings);
        KafkaStreams streams = new KafkaStreams(BenchTopologies.identity(config.topics().input(), config.topics().output()),
                KafkaSettings.streams(config.connection(), config.topics()));
        CountDownLatch stopped = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING && before == KafkaStreams.State.REBALANCING) {
                System.out.println(RUNNING + config.topics().input() + " to " + config.topics().output());
            }
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                stopped.countDown();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(streams::close));
        streams.start();
        stopped.await();
    }

    /**
     * The command that runs it with {@code settings}, after {@code prefix} (e.g. a network namespace's exec). Under
     * another user ({@code setpriv}, for iptables' owner match), who may not read the checkout or the Maven repository:
     * the stamper's world-readable jar (which holds everything it uses) and a world-readable copy of this class.
     */
    public static List<String> command(List<String> prefix, Map<String, String> settings) throws java.io.IOException {
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of(ChildJvm.java(), "-Xmx256m"));
        command.addAll(Stamper.FAST_START);
        String classPath = prefix.contains("setpriv") ? ChildJvm.jarForAnyUser() + java.io.File.pathSeparator + classForAnyUser()
                : System.getProperty("java.class.path");
        command.addAll(List.of("-cp", classPath, PassThrough.class.getName()));
        settings.forEach((key, value) -> command.add(key + "=" + value));
        return command;
    }

    /** A world-readable directory holding this class alone (beside the jar {@link ChildJvm#jarForAnyUser} copies). */
    private static synchronized Path classForAnyUser() throws java.io.IOException {
        if (classDir == null) {
            Path root = ChildJvm.jarForAnyUser().getParent().resolve("pass-through");
            Path file = root.resolve(PassThrough.class.getName().replace('.', '/') + ".class");
            java.nio.file.Files.createDirectories(file.getParent());
            try (var in = PassThrough.class.getResourceAsStream(PassThrough.class.getSimpleName() + ".class")) {
                java.nio.file.Files.copy(in, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
            List<Path> made = new ArrayList<>();
            for (Path path = file; !path.equals(root.getParent()); path = path.getParent()) {
                path.toFile().setReadable(true, false);
                path.toFile().setExecutable(true, false);
                made.add(0, path);
            }
            made.forEach(path -> path.toFile().deleteOnExit());     // deleted in reverse: the file first
            classDir = root;
        }
        return classDir;
    }

    private static Path classDir;

    /** Its state directory under {@code work}, for {@code state.dir}. */
    public static Path stateDir(Path work, String instance) {
        return work.resolve("pass-through-" + instance);
    }
}
