package io.snowstamp.registry;

import io.snowstamp.SnowstampException;
import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ChangelogReader;
import io.snowstamp.recovery.ChangelogWriter;
import io.snowstamp.recovery.OutputScan;
import io.snowstamp.recovery.ResumePlan;
import io.snowstamp.state.WorkerState;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The high-water mark of every worker of an application's range, computed exactly as
 * {@code recover} computes a resume point ({@link ResumePlan}): the larger of the application's
 * changelog state and the highest ID of the worker in its output partition (the tail, read
 * {@code read_uncommitted}), and never below a mark the range already inherited.
 */
public final class ReleaseMarks {
    /** The marks of one application and where they came from, per worker. */
    public record Result(SortedMap<Long, Long> marks, ResumePlan plan, String note) {
    }

    private ReleaseMarks() {
    }

    /**
     * @param segments the application's claims in one space (contiguous, lowest worker first)
     * @param client   connection and security settings of a plain client
     * @throws SnowstampException when the output topic is missing (nothing proves what was issued) and {@code allowMissingOutput} is false
     */
    public static Result compute(List<Claim> segments, Properties client, Admin admin, Duration timeout, boolean allowMissingOutput) {
        Claim first = segments.get(0);
        IdLayout layout = IdLayout.fromFingerprint(first.layout());
        long firstWorker = first.firstWorker();
        int count = segments.stream().mapToInt(Claim::count).sum();
        Properties consumer = new Properties();
        consumer.putAll(client);
        consumer.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        consumer.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        consumer.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumer.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Map<Integer, WorkerState> states = ChangelogReader.latestOrNone(consumer, first.application(), timeout);
        int outputPartitions = ChangelogWriter.partitionCount(admin, first.output(), timeout).orElse(0);
        String note = "";
        Map<Integer, Long> highest = Map.of();
        if (outputPartitions == 0) {
            if (!allowMissingOutput) {
                throw new SnowstampException("output topic " + first.output() + " of application " + first.application()
                        + " does not exist: the marks would come from its changelog alone; add --force to release anyway");
            }
            note = "output topic " + first.output() + " does not exist: marks from the changelog alone";
        } else {
            highest = OutputScan.highest(client, first.output(), Math.min(count, outputPartitions), layout, first.datacenter(),
                    firstWorker, false, timeout, timeout);
        }
        ResumePlan plan = ResumePlan.plan(count, states, highest, states, layout, firstWorker, System.currentTimeMillis());
        SortedMap<Long, Long> marks = new TreeMap<>();
        for (ResumePlan.Row row : plan.rows()) {
            long inherited = -1;
            for (Claim segment : segments) {
                inherited = Math.max(inherited, segment.markOf(row.worker()));
            }
            marks.put(row.worker(), Math.max(row.resume(), inherited));
        }
        return new Result(marks, plan, note);
    }
}
