package io.snowstamp.testing;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A background thread that writes a numbered stream ({@code {"n":k,"kind":"fault"}}, key
 * {@code user-(k % 100)}) at a bounded rate, counting what the broker acknowledged.
 *
 * <p>The producer is idempotent with acks=all and retries for {@code deliveryTimeout}, so a
 * restarting broker delays records rather than losing or doubling them. Any send that finally
 * fails is kept and rethrown by {@link #stop()}: a test never verifies against a count it does not
 * know. Numbers are assigned in send order, from {@code first}; the value of a record therefore
 * says which phase of a test produced it.
 */
public final class NumberedProducer implements AutoCloseable {
    private final String bootstrapServers;
    private final String topic;
    private final long first;
    private final long limit;
    private final int perSecond;
    private final Duration deliveryTimeout;

    /**
     * A limit no test reaches: the load runs until the test {@link #stop()}s it after its last fault, so
     * that every fault hits a stamper at work however slowly a loaded machine gets there.
     */
    public static final long UNTIL_STOPPED = Long.MAX_VALUE;

    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private volatile boolean stopping;
    private int spreadOver;
    private Thread thread;
    private KafkaProducer<byte[], byte[]> producer;

    /**
     * @param first     number of the first record
     * @param limit     the most records to send; the thread ends by itself after them
     * @param perSecond records per second, at most (&gt; 0)
     */
    public NumberedProducer(String bootstrapServers, String topic, long first, long limit, int perSecond, Duration deliveryTimeout) {
        if (perSecond <= 0 || limit < 0) {
            throw new IllegalArgumentException("perSecond=" + perSecond + " limit=" + limit);
        }
        this.bootstrapServers = bootstrapServers;
        this.topic = topic;
        this.first = first;
        this.limit = limit;
        this.perSecond = perSecond;
        this.deliveryTimeout = deliveryTimeout;
    }

    public NumberedProducer(String bootstrapServers, String topic, long limit, int perSecond) {
        this(bootstrapServers, topic, 0, limit, perSecond, Duration.ofMinutes(2));
    }

    /**
     * Sends record n to partition {@code n % partitions} instead of by key, so that every partition
     * gets records (100 keys leave some of 64 partitions empty). Before {@link #start}.
     */
    public NumberedProducer spreadOver(int partitions) {
        this.spreadOver = partitions;
        return this;
    }

    /** Sends exactly {@code count} records numbered from {@code first} (at most 10,000/s) and returns once all are acknowledged. */
    public static void send(String bootstrapServers, String topic, long first, long count) throws InterruptedException {
        new NumberedProducer(bootstrapServers, topic, first, count, 10_000, Duration.ofMinutes(1)).start().finish(Duration.ofSeconds(60));
    }

    /** Starts the sending thread; returns at once. */
    public NumberedProducer start() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(deliveryTimeout.toMillis()));
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(deliveryTimeout.toMillis()));
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "1000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producer = new KafkaProducer<>(p);
        thread = new Thread(this::sendLoop, "numbered-producer-" + topic);
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    private void sendLoop() {
        long startNanos = System.nanoTime();
        try {
            for (long i = 0; i < limit && !stopping && failure.get() == null; i++) {
                long dueNanos = startNanos + i * 1_000_000_000L / perSecond;
                long wait = dueNanos - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                long n = first + i;
                byte[] key = ("user-" + (n % 100)).getBytes(StandardCharsets.UTF_8);
                byte[] value = ("{\"n\":" + n + ",\"kind\":\"fault\"}").getBytes(StandardCharsets.UTF_8);
                sent.incrementAndGet();
                Integer partition = spreadOver > 0 ? (int) (n % spreadOver) : null;
                producer.send(new ProducerRecord<>(topic, partition, key, value), (metadata, error) -> {
                    if (error == null) {
                        acked.incrementAndGet();
                    } else {
                        failure.compareAndSet(null, error);
                    }
                });
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            failure.compareAndSet(null, e);
        }
    }

    /** Records the broker acknowledged so far. */
    public long acked() {
        return acked.get();
    }

    /** Whether the thread has sent all {@code limit} records (or was stopped). */
    public boolean done() {
        return thread != null && !thread.isAlive();
    }

    /** Waits until the thread has sent its {@code limit} records; false on timeout. */
    public boolean awaitDone(Duration timeout) throws InterruptedException {
        thread.join(timeout.toMillis());
        return !thread.isAlive();
    }

    /** Waits (bounded) until all {@code limit} records are sent, then {@link #stop()}s: produces exactly {@code limit} records. */
    public long finish(Duration timeout) throws InterruptedException {
        if (!awaitDone(timeout)) {
            throw new AssertionError("could not send " + limit + " records within " + timeout.toSeconds() + " s; sent " + sent.get());
        }
        return stop();
    }

    /**
     * Stops sending now, waits for every record sent to be acknowledged, and returns how many were:
     * the exact number of records in the topic from this producer.
     *
     * @throws AssertionError if any record could not be delivered
     */
    public long stop() throws InterruptedException {
        stopping = true;
        thread.join(deliveryTimeout.toMillis() + 10_000);
        if (thread.isAlive()) {
            throw new AssertionError("producer thread did not stop");
        }
        producer.flush();
        producer.close(Duration.ofSeconds(30));
        Exception error = failure.get();
        if (error != null) {
            throw new AssertionError("a record could not be produced: " + error, error);
        }
        if (acked.get() != sent.get()) {
            throw new AssertionError("sent " + sent.get() + " records but " + acked.get() + " were acknowledged");
        }
        return acked.get();
    }

    @Override
    public void close() throws InterruptedException {
        if (thread != null && producer != null) {
            stopping = true;
            thread.join(5_000);
            producer.close(Duration.ofSeconds(5));
        }
    }
}
