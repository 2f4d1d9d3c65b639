package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Kafka Streams' main consumer with what makes many tasks start as one batch of work: their committed
 * offsets in one request ({@link CommittedBatch}) and their input held back while their leases wait out
 * the previous owners' terms ({@link TakeoverHold}). Every other call goes to the consumer unchanged.
 *
 * <p>A dynamic proxy of the {@link Consumer} interface rather than a class that forwards its fifty-odd
 * methods by hand: five of them matter here, and a method a later client adds is forwarded too.
 */
final class StartingTasksConsumer implements InvocationHandler {
    private static final Logger log = LoggerFactory.getLogger(StartingTasksConsumer.class);
    private final Consumer<byte[], byte[]> consumer;
    private final TakeoverHold hold;
    private final CommittedBatch committed = new CommittedBatch();
    private final StartStats stats;
    /** The fault test's stalled partition (null: none). */
    private final StallHook stallHook = StallHook.forNewConsumer();
    /** What this consumer delivered, for the stall watch. */
    private final UndeliveredTails.Poller delivered;

    /** Told the partitions whose committed offsets a request fetched (the tail prefetch: which tails it may read early). */
    private final java.util.function.Consumer<Set<TopicPartition>> committedFetched;

    /** Run on the stream thread before each poll: a clean stop's last IDs ({@code StamperStats#beforePoll}). */
    private final Runnable beforeEachPoll;

    /** Told which consumer is the polling thread's ({@link GenerationCheck}). */
    private final GenerationCheck generation;

    private StartingTasksConsumer(Consumer<byte[], byte[]> consumer, TakeoverHold hold, StartStats stats, Runnable beforeEachPoll,
                                  java.util.function.Consumer<Set<TopicPartition>> committedFetched, GenerationCheck generation) {
        this.committedFetched = committedFetched;
        this.generation = generation;
        this.consumer = consumer;
        this.hold = hold;
        this.stats = stats;
        this.beforeEachPoll = beforeEachPoll;
        this.delivered = stats.undelivered().new Poller();
    }

    /**
     * {@code consumer} with batched committed offsets and held-back input for the tasks {@code hold} says are waiting;
     * {@code beforeEachPoll} runs on the stream thread before each of its polls; {@code committedFetched} is told the
     * partitions of every committed-offset request, once it was answered; {@code generation} learns which thread polls it.
     */
    @SuppressWarnings("unchecked")
    static Consumer<byte[], byte[]> wrap(Consumer<byte[], byte[]> consumer, TakeoverHold hold, StartStats stats, Runnable beforeEachPoll,
                                         java.util.function.Consumer<Set<TopicPartition>> committedFetched, GenerationCheck generation) {
        return (Consumer<byte[], byte[]>) Proxy.newProxyInstance(Consumer.class.getClassLoader(),
                new Class<?>[] {Consumer.class}, new StartingTasksConsumer(consumer, hold, stats, beforeEachPoll, committedFetched, generation));
    }

    @Override
    @SuppressWarnings("unchecked")
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        switch (method.getName()) {
            case "poll" -> {
                if (args != null && args.length == 1 && args[0] instanceof Duration) {
                    beforeEachPoll.run();
                    beforePoll();
                    try {
                        Object records = forward(method, args);
                        delivered.afterPoll(consumer, (ConsumerRecords<?, ?>) records);
                        return records;
                    } finally {
                        committed.dropAll();
                    }
                }
            }
            case "subscribe" -> {
                // Kafka Streams' rebalance listener, told first what this consumer was given or lost (the stall watch)
                for (int i = 0; args != null && i < args.length; i++) {
                    if (args[i] instanceof org.apache.kafka.clients.consumer.ConsumerRebalanceListener listener) {
                        args[i] = new ReassignmentListener(listener, delivered::reassigned);
                    }
                }
            }
            case "pause" -> {
                Collection<TopicPartition> partitions = (Collection<TopicPartition>) args[0];
                hold.paused(partitions);
                committed.drop(partitions);
            }
            case "resume" -> {
                Collection<TopicPartition> partitions = (Collection<TopicPartition>) args[0];
                committed.drop(partitions);
                long heldBefore = hold.heldTotal();
                List<TopicPartition> now = hold.resumed(partitions);
                stats.held(hold.heldTotal() - heldBefore);
                consumer.resume(now);
                return null;
            }
            case "committed" -> {
                Set<TopicPartition> partitions = (Set<TopicPartition>) args[0];
                Duration timeout = args.length > 1 ? (Duration) args[1] : null;
                long before = committed.requests();
                Map<TopicPartition, OffsetAndMetadata> result = committed.committed(partitions, this::startingPartitions, wanted -> {
                    Map<TopicPartition, OffsetAndMetadata> answer = timeout == null ? consumer.committed(wanted) : consumer.committed(wanted, timeout);
                    committedFetched.accept(wanted);
                    return answer;
                });
                stats.committed(committed.requests() - before, partitions.size());
                return result;
            }
            // the proxy is its own identity, not the consumer's
            case "equals" -> {
                return args != null && args.length == 1 ? proxy == args[0] : forward(method, args);
            }
            case "hashCode" -> {
                return args == null ? System.identityHashCode(proxy) : forward(method, args);
            }
            default -> {
                // forwarded below
            }
        }
        return forward(method, args);
    }

    /** Kafka Streams' pauses are kept, held partitions whose wait is over flow again, and nothing fetched survives the poll. */
    private void beforePoll() {
        generation.polledBy(consumer);
        committed.dropAll();
        Set<TopicPartition> assigned = consumer.assignment();
        List<TopicPartition> now = hold.release(assigned);
        if (!now.isEmpty()) {
            // where a takeover's first records wait: SNOWSTAMP_LOG_LEVEL=DEBUG
            log.debug("{} held partition(s) resumed: their leases' waits are over", now.size());
            consumer.resume(now);
        }
        if (stallHook != null) {
            stallHook.beforePoll(consumer);
        }
    }

    /** The assigned partitions of tasks that have not started: being created or restored. */
    private Set<TopicPartition> startingPartitions() {
        Set<TopicPartition> starting = hold.notStarted();
        starting.retainAll(consumer.assignment());
        return starting;
    }

    private Object forward(Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(consumer, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
