package io.snowstamp.testing;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.Set;

/** Kafka client metrics of this JVM, read through JMX: tests count requests with them, not time. */
public final class ClientMetrics {
    private ClientMetrics() {
    }

    /** The {@code request-total} metric of the consumer {@code clientId} in this JVM. */
    public static double consumerRequests(String clientId) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Object value = server.getAttribute(new ObjectName("kafka.consumer:type=consumer-metrics,client-id=" + clientId), "request-total");
        return ((Number) value).doubleValue();
    }

    /**
     * The sum of attribute {@code attribute} over every MBean matching {@code pattern} in this JVM (0 if none), e.g. the
     * {@code request-total} of the producers of every stream thread of an application.
     */
    public static double sum(String pattern, String attribute) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> names = server.queryNames(new ObjectName(pattern), null);
        double total = 0;
        for (ObjectName name : names) {
            total += ((Number) server.getAttribute(name, attribute)).doubleValue();
        }
        return total;
    }
}
