package io.snowstamp.stream;

import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A fault-test hook, off unless the JVM runs with {@code -Dsnowstamp.test.freeze-at-record=N}:
 * the N-th record this process stamps (counted over all its tasks) first stops the whole process
 * with SIGSTOP, from inside {@code process}, in the middle of a batch. The test waits until the
 * partitions have moved, then sends SIGCONT; the record is then handed to the stamper as if
 * nothing happened, the worst moment for a zombie. Once per JVM. Without the property the
 * topology holds the stamper itself, not this wrapper: nothing on the record path changes.
 */
final class FreezeHook implements Processor<byte[], byte[], byte[], StampedValue> {
    static final String PROPERTY = "snowstamp.test.freeze-at-record";
    private static final Logger log = LoggerFactory.getLogger(FreezeHook.class);
    private static final AtomicLong COUNT = new AtomicLong();

    private final Processor<byte[], byte[], byte[], StampedValue> stamper;
    private final long freezeAt;
    private ProcessorContext<byte[], StampedValue> context;

    private FreezeHook(Processor<byte[], byte[], byte[], StampedValue> stamper, long freezeAt) {
        this.stamper = stamper;
        this.freezeAt = freezeAt;
    }

    /** {@code stampers} itself, or, with the system property set, stampers wrapped in this hook. */
    static ProcessorSupplier<byte[], byte[], byte[], StampedValue> wrap(ProcessorSupplier<byte[], byte[], byte[], StampedValue> stampers) {
        String at = System.getProperty(PROPERTY);
        if (at == null) {
            return stampers;
        }
        long freezeAt = Long.parseLong(at.trim());
        return () -> new FreezeHook(stampers.get(), freezeAt);
    }

    @Override
    public void init(ProcessorContext<byte[], StampedValue> context) {
        this.context = context;
        stamper.init(context);
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        if (COUNT.incrementAndGet() == freezeAt) {
            freezeSelf();
        }
        stamper.process(record);
    }

    private void freezeSelf() {
        long pid = ProcessHandle.current().pid();
        log.warn("test hook {}={}: stopping this process (SIGSTOP, pid {}) before stamping {}", PROPERTY, freezeAt, pid,
                context.recordMetadata().map(m -> m.topic() + "/" + m.partition() + "/" + m.offset()).orElse("?"));
        try {
            // returns once SIGCONT has resumed this process (kill itself exits right after signalling)
            new ProcessBuilder("kill", "-STOP", String.valueOf(pid)).inheritIO().start().waitFor();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("test hook: cannot run kill -STOP: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        log.warn("test hook {}: resumed (SIGCONT); stamping goes on with the same record", PROPERTY);
    }

    @Override
    public void close() {
        stamper.close();
    }
}
