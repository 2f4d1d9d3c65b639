package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A fault-test hook, off unless the JVM runs with {@code -Dsnowstamp.test.stall-partition=P}: the first main consumer of
 * the process never delivers input partition P (it keeps it paused before every poll, whatever Kafka Streams resumes) —
 * a held partition whose records stop reaching its task while the group sees nothing wrong, the stall the stall watch
 * ({@link StallWatch}) exists for. A consumer made later (a restarted stream thread) is not touched. Once per JVM.
 */
final class StallHook {
    static final String PROPERTY = "snowstamp.test.stall-partition";
    private static final Logger log = LoggerFactory.getLogger(StallHook.class);
    private static final AtomicBoolean USED = new AtomicBoolean();

    private final int partition;
    private boolean told;

    private StallHook(int partition) {
        this.partition = partition;
    }

    /** The hook for a new main consumer: null unless the property is set and no consumer of this process had it. */
    static StallHook forNewConsumer() {
        String value = System.getProperty(PROPERTY);
        if (value == null || !USED.compareAndSet(false, true)) {
            return null;
        }
        return new StallHook(Integer.parseInt(value.trim()));
    }

    /** Before a poll: the partition stays paused. */
    void beforePoll(Consumer<?, ?> consumer) {
        List<TopicPartition> stalled = consumer.assignment().stream().filter(tp -> tp.partition() == partition).toList();
        if (!stalled.isEmpty()) {
            consumer.pause(stalled);
            if (!told) {
                told = true;
                log.warn("-D{}={}: input partition {} is never delivered to this stream thread (fault test)", PROPERTY, partition,
                        stalled);
            }
        }
    }
}
