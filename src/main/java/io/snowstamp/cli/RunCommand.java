package io.snowstamp.cli;

import io.snowstamp.admin.AdminServer;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.CachedClock;
import io.snowstamp.runtime.Preflight;
import io.snowstamp.runtime.StreamsRunner;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "run", header = "Runs the stamper until SIGTERM or Ctrl-C.",
        description = "Runs the stamper until SIGTERM or Ctrl-C, then commits in-flight work and stops. Without "
                + "--bootstrap-servers it uses the embedded broker of --data-dir (starting one if no snowstamp "
                + "process runs it) and creates the topics from topics/. Start more instances with the same "
                + "--application-id and different --instance-id to spread the partitions. Exits 0 after a clean stop, "
                + "1 with the reason if the stamper dies. Before anything starts, the configuration is checked (the ID "
                + "layout must be able to issue IDs now) and so is Kafka: unreachable, or the input or output topic "
                + "missing, ends in one line within seconds.",
        footer = {"", "Examples:", "  snowstamp run",
                "  snowstamp run --application-id orders --instance-id a --admin-port 8080",
                "  # values framed for a schema registry (avro, protobuf or json-schema): the ID as a field of each value",
                "  snowstamp run --set stamp.value-format=json-schema --set schema-registry.url=http://registry:8081"})
final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions options;

    @Option(names = "--application-id", paramLabel = "ID", description = "same as --set application.id=ID"
            + " (default: application.id, which defaults to snowstamp)")
    String applicationId;

    @Option(names = "--state-dir", paramLabel = "DIR", description = "same as --set state.dir=DIR"
            + " (default: state.dir, which defaults to data/streams)")
    Path stateDir;

    @Option(names = "--instance-id", paramLabel = "NAME", description = "same as --set instance.id=NAME;"
            + " instances on one machine need different names (default: instance.id, else the host name)")
    String instanceId;

    @Option(names = "--admin-port", paramLabel = "PORT", description = "serve /health/live, /health/ready, /metrics and"
            + " /state on this port (same as --set admin.port=PORT; 0 = any free port; default: off)")
    Integer adminPort;

    @Option(names = "--admin-bind", paramLabel = "ADDRESS", description = "address of the admin server (same as --set"
            + " admin.bind=ADDRESS; default: 127.0.0.1; 0.0.0.0 = every interface)")
    String adminBind;

    @Option(names = "--profile", paramLabel = "NAME", description = "same as --set profile=NAME: default (exactly-once,"
            + " 100 ms commits) or throughput (1 s commits: more records/s, about 1 s end-to-end latency); see the benchmarks page"
            + " (default: profile, which defaults to default)")
    String profile;

    @Option(names = "--shutdown-timeout", paramLabel = "D", defaultValue = "30s",
            description = "how long a clean stop may take (default: ${DEFAULT-VALUE})")
    Duration timeout;

    @Override
    public Integer call() throws InterruptedException {
        Map<String, String> flags = new LinkedHashMap<>();
        if (applicationId != null) {
            flags.put(Keys.APPLICATION_ID, applicationId);
        }
        if (stateDir != null) {
            flags.put(Keys.STATE_DIR, stateDir.toString());
        }
        if (instanceId != null) {
            flags.put(Keys.INSTANCE_ID, instanceId);
        }
        if (adminPort != null) {
            flags.put(Keys.ADMIN_PORT, adminPort.toString());
        }
        if (adminBind != null) {
            flags.put(Keys.ADMIN_BIND, adminBind);
        }
        if (profile != null) {
            flags.put(Keys.PROFILE, profile);
        }
        SnowstampConfig loaded = options.load(flags);
        options.configOptions.requireIssuableLayout();
        KafkaOptions.Connection connection = options.connect(loaded, 0);
        PrintWriter out = spec.commandLine().getOut();
        // the cached clock: a volatile read per ID instead of a system call (see CachedClock)
        StreamsRunner runner = new StreamsRunner(connection.config(), CachedClock::millis);
        // started before Kafka Streams: its port is the application.server other instances query
        AdminServer admin = loaded.admin().enabled()
                ? AdminServer.start(connection.config(), runner, System::currentTimeMillis) : null;
        CleanStop.exitZeroOnSignal();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            runner.close(timeout);
            if (admin != null) {
                admin.close();
            }
            connection.close();
        }, "snowstamp-shutdown"));
        if (admin != null) {
            runner.advertise(admin.advertisedAddress());
            out.println("admin: http://" + loaded.admin().bind() + ":" + admin.getPort() + " ("
                    + String.join(" ", AdminServer.ENDPOINTS) + ")");
        }
        if (connection.embedded()) {
            TopicsCommand.apply(connection.config(), Path.of("topics"), Preflight.LIMIT);
            out.println("bootstrap.servers=" + connection.config().connection().kafka().get("bootstrap.servers"));
        }
        connection.requireTopics(Preflight.LIMIT, loaded.topics().input(), loaded.topics().output());
        runner.start();
        out.println("stamping " + loaded.topics().input() + " -> " + loaded.topics().output() + " as " + loaded.connection().applicationId()
                + "/" + loaded.connection().instanceId() + " (" + loaded.connection().processingGuarantee() + "); stop with SIGTERM or Ctrl-C");
        out.flush();
        runner.awaitTermination();
        return 0;
    }
}
