package io.snowstamp.it.cluster;

import java.util.ArrayList;
import java.util.List;

/**
 * The stamper's membership lease, as the cluster tests see it: whether the jar has one, and the
 * test run's switch for it.
 *
 * <p>{@code mvn verify -Dcluster.lease=off ...} starts every stamper of the cluster tests with
 * {@code -Dsnowstamp.test.lease=off} (the lease then stays out of the way: the behaviour before it),
 * to show that the partial-partition test fails without it.
 */
final class LeaseSwitch {
    /** The stamper's own switch (a JVM system property of the stamper process). */
    static final String STAMPER_PROPERTY = "snowstamp.test.lease";
    /** This test run's switch: {@code -Dcluster.lease=off}. */
    static final String TEST_PROPERTY = "cluster.lease";

    private LeaseSwitch() {
    }

    /** True when the test run asks for stampers without the lease. */
    static boolean off() {
        return "off".equals(System.getProperty(TEST_PROPERTY));
    }

    /**
     * The JVM flags that pass this run's switch on to a stamper child (none unless it is off), and any
     * given with {@code -Dcluster.stamper.jvm=FLAG,FLAG} (e.g. {@code -DSNOWSTAMP_LOG_KAFKA_LEVEL=INFO}: Kafka's
     * own log lines, for finding where a stall's time goes).
     */
    static List<String> jvmArgs() {
        List<String> args = new ArrayList<>();
        if (off()) {
            args.add("-D" + STAMPER_PROPERTY + "=off");
        }
        for (String arg : System.getProperty("cluster.stamper.jvm", "").split(",")) {
            if (!arg.isBlank()) {
                args.add(arg.trim());
            }
        }
        return args;
    }
}
