package io.snowstamp.runtime;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.lease.LeaseVerifier;
import io.snowstamp.registry.RegistryLog;
import io.snowstamp.resume.PartitionTail;
import java.time.Duration;

/**
 * The longest each step of {@code run}'s clean stop ({@link StreamsRunner#close(Duration)}) may take, read from the
 * timeouts the code uses: the Kubernetes grace period must cover their sum (KubernetesManifestsTest), and a timeout
 * that grows in the code grows the sum with it. Here, in the runner's package, for its package-private constants.
 */
public final class CleanStopBudget {
    private CleanStopBudget() {
    }

    /** The stall watch's client closes first. */
    public static Duration stallWatch() {
        return StallWatch.CLOSE_TIMEOUT;
    }

    /** Idle tasks' last IDs (exactly-once): at most half the stop time, capped here. */
    public static Duration lastIds() {
        return StreamsRunner.LAST_IDS_WAIT;
    }

    /**
     * The topology's own clients, closed one after another: the tail reader (the tail guard's or sequence mode's), the
     * transaction fence, the lease reader (its thread, then its producer, admin and consumer).
     */
    public static Duration topologyClients() {
        return PartitionTail.CLOSE_TIMEOUT.plus(TransactionFence.CLOSE_TIMEOUT).plus(LeaseVerifier.THREAD_STOP_TIMEOUT)
                .plus(LeaseVerifier.CLIENT_CLOSE_TIMEOUT.multipliedBy(3));
    }

    /**
     * The worker registry's release ({@link RegistryClaim#close}): a heartbeat under way finishes, the record of the clean
     * stop (a read, a write per claim: one heartbeat timeout in all), then the registry's two logs (its own and its
     * heartbeats') close a producer and an admin client each.
     */
    public static Duration registryRelease(SnowstampConfig config) {
        return config.registry().heartbeatTimeout().multipliedBy(2).plus(RegistryLog.CLOSE_TIMEOUT.multipliedBy(4));
    }
}
