package io.snowstamp.testing;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;

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
}
