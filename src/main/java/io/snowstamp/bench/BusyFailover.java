package io.snowstamp.bench;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.runtime.TopicAdmin;
import io.snowstamp.runtime.TopicSpec;
import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import java.util.stream.IntStream;

/**
 * The failover an operator with busy partitions sees: input on every partition all the time ({@code rate} records per
 * partition per second from a producer of this process, from before the first start to the end), two instances, one
 * killed with SIGKILL once both run; the clock runs until every partition has stamped a record produced after the kill
 * (the failover) and then one produced after the failover (caught up). Measured for the stamper ({@code snowstamp run})
 * and for its floor, a Kafka Streams pass-through with the same settings ({@link PassThrough}), each in child processes
 * so that the figures are theirs, with the broker wherever the connection settings point (its own process, for figures
 * to compare).
 *
 * <p>Every record's value names its partition, its number in the partition and when it was produced
 * ({@code {"p":P,"n":N,"t":MILLIS}}); the output is read {@code read_committed} from the start, so the run also counts
 * what a user would check: records missing, records stamped twice (at-least-once re-stamps), and ID values issued twice
 * (never allowed) — and the longest time a partition with input waiting went without an output record.
 */
public final class BusyFailover {
    /** Both instances run this long after the second started (its tasks assigned, both stamping) before one dies. */
    private static final long BOTH_RUN_MILLIS = 10_000;
    /** Input keeps coming this long after the failover caught up, so stalls after it show too. */
    private static final long AFTER_MILLIS = 20_000;

    /** What is measured: the stamper or the pass-through floor. */
    public enum Subject { STAMPER, PASS_THROUGH }

    /** The figures of one run; times in seconds. */
    public record Figures(Subject subject, int partitions, double rate, double startSeconds, double failoverSeconds,
                          double caughtUpSeconds, double longestStallSeconds, long produced, long missing, long restamped,
                          long duplicateIds, Footprint.Conditions conditions) {
    }

    private final Footprint children;
    private final ConnectionSettings base;
    private final Duration timeout;

    /** @param children starts and stops the measured processes (the footprint's settings, JVM options and work directory) */
    public BusyFailover(Footprint children, ConnectionSettings base, Duration timeout) {
        this.children = children;
        this.base = base;
        this.timeout = timeout;
    }

    /**
     * One run of {@code subject} on fresh topics of {@code partitions} partitions at {@code rate} records per partition per
     * second, under the footprint's guarantee; {@code neighbourCores} only names the busy loops beside it in the figures.
     */
    public Figures measure(Subject subject, int partitions, double rate, int neighbourCores) throws IOException, InterruptedException {
        double loadBefore = Neighbour.loadAverage();
        String run = "snowstamp-busy-" + (subject == Subject.STAMPER ? "stamper-" : "floor-") + partitions + "-"
                + ProcessHandle.current().pid() + "-" + System.nanoTime() % 100_000;
        String in = run + "-in";
        String out = run + "-out";
        String dlq = run + "-dlq";
        Path dir = Files.createDirectories(children.work().resolve(run));
        Path settings = children.writeSettings(dir, run, in, out, dlq);
        String main = subject == Subject.STAMPER ? null : PassThrough.class.getName();
        try (Admin admin = Admin.create(KafkaSettings.client(base))) {
            TopicAdmin.apply(admin, List.of(new TopicSpec(in, partitions, (short) -1, Map.of()),
                    new TopicSpec(out, partitions, (short) -1, Map.of()), new TopicSpec(dlq, 1, (short) -1, Map.of())));
            try (Pacer pacer = new Pacer(base, in, partitions, rate);
                 Output output = new Output(base, out, partitions, timeout)) {
                Process a = null;
                Process b = null;
                try {
                    long begin = System.currentTimeMillis();
                    a = children.launch(settings, dir, "a", main);
                    output.await(t -> true, begin, a);
                    double startSeconds = (System.currentTimeMillis() - begin) / 1e3;
                    long second = System.currentTimeMillis();
                    b = children.launch(settings, dir, "b", main);
                    output.await(t -> t >= second + BOTH_RUN_MILLIS, second, a, b);
                    a.destroyForcibly();    // SIGKILL on Linux: no leave-group, the group waits for the session timeout
                    long killed = System.currentTimeMillis();
                    a.waitFor(30, TimeUnit.SECONDS);
                    output.await(t -> t > killed, killed, b);
                    long failedOver = System.currentTimeMillis();
                    output.await(t -> t >= failedOver, killed, b);
                    long caughtUp = System.currentTimeMillis();
                    output.await(t -> t >= caughtUp + AFTER_MILLIS, caughtUp, b);
                    long[] last = pacer.stop();
                    output.awaitNumbers(last, System.currentTimeMillis(), b);
                    return new Figures(subject, partitions, rate, startSeconds, (failedOver - killed) / 1e3, (caughtUp - killed) / 1e3,
                            output.longestStallMillis() / 1e3, pacer.produced(), output.missing(last), output.restamped(),
                            output.duplicateIds(), new Footprint.Conditions(children.guarantee(), neighbourCores, loadBefore,
                                    Neighbour.loadAverage()));
                } finally {
                    Footprint.stop(a);
                    Footprint.stop(b);
                }
            } finally {
                children.deleteRun(admin, run, List.of(in, out, dlq));
            }
        }
    }

    /** One run's figures on one line. */
    public static String line(Figures f) {
        return String.format(java.util.Locale.ROOT, "%s, %d busy partitions at %.1f records/s each: every partition stamped %.1f s"
                        + " after the start; failover %.1f s (caught up %.1f s); longest stall of a partition %.1f s; %d records,"
                        + " %d missing, %d stamped twice, %d ID values issued twice; %s",
                f.subject() == Subject.STAMPER ? "stamper" : "pass-through (floor)", f.partitions(), f.rate(), f.startSeconds(),
                f.failoverSeconds(), f.caughtUpSeconds(), f.longestStallSeconds(), f.produced(), f.missing(), f.restamped(),
                f.duplicateIds(), f.conditions().line());
    }

    /** Produces {@code rate} records per partition per second, round robin over the partitions, until stopped. */
    private static final class Pacer implements AutoCloseable {
        private final KafkaProducer<byte[], byte[]> producer;
        private final Thread thread;
        private final long[] next;
        private volatile boolean running = true;
        private volatile RuntimeException failure;

        Pacer(ConnectionSettings base, String topic, int partitions, double rate) {
            producer = new KafkaProducer<>(KafkaSettings.producer(base), new ByteArraySerializer(), new ByteArraySerializer());
            next = new long[partitions];
            long roundNanos = (long) (1e9 / rate);
            thread = new Thread(() -> {
                try {
                    long due = System.nanoTime();
                    while (running) {
                        for (int p = 0; p < partitions; p++) {
                            byte[] value = ("{\"p\":" + p + ",\"n\":" + next[p]++ + ",\"t\":" + System.currentTimeMillis() + "}")
                                    .getBytes(StandardCharsets.UTF_8);
                            producer.send(new ProducerRecord<>(topic, p, null, value));
                        }
                        due += roundNanos;
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            TimeUnit.NANOSECONDS.sleep(wait);
                        }
                    }
                    producer.flush();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    failure = e;
                }
            }, "busy-failover-input");
            thread.setDaemon(true);
            thread.start();
        }

        /** Stops producing; the highest number produced to each partition. */
        long[] stop() throws InterruptedException {
            running = false;
            thread.join(30_000);
            if (failure != null) {
                throw new SnowstampException("the bench's input producer failed: " + failure.getMessage());
            }
            long[] last = new long[next.length];
            for (int p = 0; p < next.length; p++) {
                last[p] = next[p] - 1;
            }
            return last;
        }

        long produced() {
            return IntStream.range(0, next.length).mapToLong(p -> next[p]).sum();
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(30_000);
            producer.close(Duration.ofSeconds(10));
        }
    }

    /** Reads the output {@code read_committed} from the start: per partition, what was stamped, and when. */
    private static final class Output implements AutoCloseable {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final int partitions;
        /** per partition: the production time of the newest record read */
        private final long[] newestProduced;
        private final long[] lastArrival;
        private final long[] longestGap;
        private final List<Set<Long>> numbers;
        private final Set<Long> ids = new HashSet<>();
        private long restamped;
        private long duplicateIds;

        private final long timeoutMillis;

        Output(ConnectionSettings base, String topic, int partitions, Duration timeout) {
            this.timeoutMillis = timeout.toMillis();
            var props = KafkaSettings.client(base);
            props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
            props.remove(ConsumerConfig.GROUP_ID_CONFIG);
            consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
            List<TopicPartition> all = IntStream.range(0, partitions).mapToObj(p -> new TopicPartition(topic, p)).toList();
            consumer.assign(all);
            consumer.seekToBeginning(all);
            this.partitions = partitions;
            newestProduced = new long[partitions];
            java.util.Arrays.fill(newestProduced, -1);
            lastArrival = new long[partitions];
            longestGap = new long[partitions];
            numbers = IntStream.range(0, partitions).mapToObj(p -> (Set<Long>) new HashSet<Long>()).toList();
        }

        /**
         * Reads until every partition has stamped a record whose production time passes {@code produced}; fails after the
         * timeout from {@code since}, or as soon as one of {@code stampers} has exited.
         */
        void await(LongPredicate produced, long since, Process... stampers) {
            long deadline = since + timeoutMillis;
            while (IntStream.range(0, partitions).anyMatch(p -> newestProduced[p] < 0 || !produced.test(newestProduced[p]))) {
                check(deadline, stampers, IntStream.range(0, partitions)
                        .filter(p -> newestProduced[p] < 0 || !produced.test(newestProduced[p])).count() + " partitions");
                read();
            }
        }

        /** Reads until every partition holds the numbers up to {@code last} (or the timeout). */
        void awaitNumbers(long[] last, long since, Process... stampers) {
            long deadline = since + timeoutMillis;
            while (missing(last) > 0 && System.currentTimeMillis() < deadline) {
                check(Long.MAX_VALUE, stampers, "");
                read();
            }
        }

        private void check(long deadline, Process[] stampers, String behind) {
            for (Process stamper : stampers) {
                if (!stamper.isAlive()) {
                    throw new SnowstampException("a measured process exited with status " + stamper.exitValue()
                            + "; its log is next to its settings under the bench's temporary directory");
                }
            }
            if (System.currentTimeMillis() > deadline) {
                throw new SnowstampException(behind + " had not stamped in time; longest stall so far "
                        + longestStallMillis() / 1000 + " s");
            }
        }

        private void read() {
            long now = System.currentTimeMillis();
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                String value = new String(record.value(), StandardCharsets.UTF_8);
                int p = (int) field(value, "\"p\":");    // the input partition (the output's, where they are aligned)
                long n = field(value, "\"n\":");
                long t = field(value, "\"t\":");
                if (!numbers.get(p).add(n)) {
                    restamped++;
                }
                newestProduced[p] = Math.max(newestProduced[p], t);
                if (lastArrival[p] > 0) {
                    longestGap[p] = Math.max(longestGap[p], now - lastArrival[p]);
                }
                lastArrival[p] = now;
                Header id = record.headers().lastHeader(IdHeader.ID);
                if (id != null && !ids.add(Long.parseLong(new String(id.value(), StandardCharsets.US_ASCII)))) {
                    duplicateIds++;
                }
            }
        }

        private static long field(String value, String name) {
            int at = value.indexOf(name) + name.length();
            int end = at;
            while (end < value.length() && Character.isDigit(value.charAt(end))) {
                end++;
            }
            return Long.parseLong(value, at, end, 10);
        }

        /** The longest time between two records of one partition, or since the last one (input never stops meanwhile). */
        long longestStallMillis() {
            long now = System.currentTimeMillis();
            long longest = 0;
            for (int p = 0; p < partitions; p++) {
                longest = Math.max(longest, Math.max(longestGap[p], lastArrival[p] > 0 ? now - lastArrival[p] : 0));
            }
            return longest;
        }

        long missing(long[] last) {
            long missing = 0;
            for (int p = 0; p < partitions; p++) {
                Set<Long> seen = numbers.get(p);
                for (long n = 0; n <= last[p]; n++) {
                    if (!seen.contains(n)) {
                        missing++;
                    }
                }
            }
            return missing;
        }

        long restamped() {
            return restamped;
        }

        /** IDs seen twice on records that are not the same input record stamped twice: never allowed. */
        long duplicateIds() {
            return duplicateIds;
        }

        @Override
        public void close() {
            consumer.close(Duration.ofSeconds(5));
        }
    }
}
