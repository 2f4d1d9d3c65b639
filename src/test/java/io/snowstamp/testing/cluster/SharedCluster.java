package io.snowstamp.testing.cluster;

import io.snowstamp.testing.Stamper;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * One {@link KafkaCluster} for every test class of the JVM that declares a {@code KafkaCluster}
 * parameter (of a {@code @BeforeAll} method, say) with this extension: started on first use and
 * stopped once after the last test
 * of the run (it lives in the root context's store, which JUnit closes at the end), its namespace
 * deleted with it. Classes using it must not run at the same time as each other when they make
 * faults (their faults would hit each other's stampers): give them
 * {@code @ResourceLock(SharedCluster.LOCK)}.
 *
 * <p>Where network namespaces cannot be made (not root, no {@code ip}/{@code iptables}/{@code setpriv}),
 * every class with this extension is skipped with one line saying why; under CI (which runs as root and installs
 * them) it fails instead.
 */
public final class SharedCluster implements ParameterResolver, ExecutionCondition {
    /** The JUnit resource lock of the shared cluster. */
    public static final String LOCK = "snowstamp-cluster";

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SharedCluster.class);

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Optional<String> why = Netns.unavailable();
        if (why.isPresent() && System.getenv("CI") != null) {
            // CI runs as root with what .ci/run installs: the replicated-cluster proofs (design.md) must run there
            throw new AssertionError("no replicated test cluster under CI: " + why.get());
        }
        return why.map(reason -> ConditionEvaluationResult.disabled("no replicated test cluster: " + reason))
                .orElseGet(() -> ConditionEvaluationResult.enabled("network namespaces and iptables work here"));
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == KafkaCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(KafkaCluster.class, key -> start(), Resource.class).cluster;
    }

    /** Closes the cluster and deletes its data when JUnit closes the root store, after the last test. */
    private record Resource(KafkaCluster cluster, Path dir) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            cluster.close();
            try (var paths = Files.walk(dir)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    private static Resource start() {
        try {
            Path dir = Files.createTempDirectory("snowstamp-cluster");
            // readable by the stampers, which run under uids of their own
            dir.toFile().setReadable(true, false);
            dir.toFile().setExecutable(true, false);
            return new Resource(KafkaCluster.start(dir, Stamper.LOGS.resolve("cluster-" + dir.getFileName())), dir);
        } catch (Exception e) {
            throw new IllegalStateException("the shared test cluster did not start", e);
        }
    }
}
