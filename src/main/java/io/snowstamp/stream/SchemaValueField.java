package io.snowstamp.stream;

import io.snowstamp.json.JsonIdSplicer;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import io.snowstamp.schema.RegistryUnavailableException;
import io.snowstamp.schema.SchemaStamper;
import io.snowstamp.schema.Stamping;
import io.snowstamp.schema.WireFormat;
import io.snowstamp.state.IdHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.function.LongSupplier;

/**
 * The ID as a field of Avro or Protobuf values framed for a schema registry ({@link SchemaStamper}):
 * a schema that cannot take it is a bad record ({@link BadRecordException}, with the reason's code);
 * a registry that does not answer is not. A value of a schema not seen yet is looked up beside the
 * stream thread ({@link #inspectNow}, {@link #lookup}), which waits through an outage, asking again
 * with a growing pause (up to 5 s); the task's records wait set aside meanwhile and are stamped once
 * the registry answers: no record is dead-lettered, skipped or stamped on a guess for an outage, and
 * the thread's other tasks stamp on. Known schemas need no registry: they keep stamping while it is down. An ID the
 * registry does not know is asked again ({@link UnknownSchemaIds}), never taken as gone. A tombstone
 * (null value) is stamped in the headers only, as in header mode.
 */
final class SchemaValueField implements ValueField {
    private static final Logger log = LoggerFactory.getLogger(SchemaValueField.class);
    private static final long FIRST_PAUSE_MILLIS = 100;
    private static final long LONGEST_PAUSE_MILLIS = 5_000;
    /** A tag of up to 5 bytes and a 10-byte varint. */
    private static final int GROWTH = 15;
    /** The plan of a null value (a tombstone): stamped in the headers only, the value stays null, as in header mode. */
    private static final Object TOMBSTONE = new Object();

    /** Where lookups of schemas not seen yet run and wait: beside the stream threads. */
    private static final java.util.concurrent.Executor LOOKUPS = java.util.concurrent.Executors.newCachedThreadPool(run -> {
        Thread thread = new Thread(run, "snowstamp-registry-lookup");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * Where the kept output IDs are asked for again ({@link SchemaStamper#recheck}): one thread for every stamper of the
     * JVM, which holds each only weakly (a stamper no topology uses any more is dropped, and its recheck with it).
     */
    private static final java.util.concurrent.ScheduledExecutorService RECHECKS = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(run -> {
        Thread thread = new Thread(run, "snowstamp-registry-recheck");
        thread.setDaemon(true);
        return thread;
    });

    private final SchemaStamper stamper;
    /** JSON Schema values: the JSON mode's check and splice, run on the text after the frame; else null. */
    private final JsonIdSplicer json;
    private final SchemaRegistryWait wait;
    private final LongSupplier clock;
    private final UnknownSchemaIds unknownIds = new UnknownSchemaIds();

    SchemaValueField(SchemaStamper stamper, SchemaRegistryWait wait, LongSupplier clock) {
        this(stamper, null, wait, clock, null);
    }

    /**
     * @param recheck how often the kept output IDs are asked for again: a registry that lost its schemas goes unnoticed
     *                for at most this long (plus one round of requests); null: never (tests)
     */
    SchemaValueField(SchemaStamper stamper, JsonIdSplicer json, SchemaRegistryWait wait, LongSupplier clock, java.time.Duration recheck) {
        this.stamper = stamper;
        this.json = json;
        this.wait = wait;
        this.clock = clock;
        if (recheck != null) {
            scheduleRechecks(new java.lang.ref.WeakReference<>(stamper), recheck.toMillis());
        }
    }

    /** Static: the scheduled task must not hold the stamper (nor this field) strongly. */
    private static void scheduleRechecks(java.lang.ref.WeakReference<SchemaStamper> ref, long millis) {
        java.util.concurrent.ScheduledFuture<?>[] task = new java.util.concurrent.ScheduledFuture<?>[1];
        task[0] = RECHECKS.scheduleWithFixedDelay(() -> {
            SchemaStamper stamper = ref.get();
            if (stamper == null) {     // no topology uses it any more
                task[0].cancel(false);
                return;
            }
            try {
                for (SchemaStamper.Reset reset : stamper.recheck()) {
                    if (reset.before() < 0) {
                        log.warn("input schema ID {}, unknown to the schema registry since it lost its schemas, is known again: {}",
                                reset.input(), reset.refused() == null ? "its output schema registered again as ID " + reset.after()
                                        : "its values are refused (" + reset.refused().getMessage() + ")");
                        continue;
                    }
                    log.warn("the schema registry {} output schema ID {} registered for the values of input schema ID {}"
                                    + " (it lost its schemas?): {}; values stamped since it did carry ID {}",
                            reset.reused() ? "serves another schema under" : "no longer knows", reset.before(), reset.input(),
                            reset.refused() == null ? "registered again as ID " + reset.after()
                                    : "its values wait and are asked for as a new schema's (" + reset.refused().getMessage() + ")",
                            reset.before());
                }
            } catch (RegistryUnavailableException outage) {
                // asked again at the next round; a value's own lookup waits through the outage
            } catch (RuntimeException e) {
                log.warn("asking the schema registry for the kept output schema IDs failed; asked again in {} ms", millis, e);
            }
        }, millis, millis, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    @Override
    public Object inspect(byte[] value) {
        if (value == null) {
            return TOMBSTONE;
        }
        long pause = FIRST_PAUSE_MILLIS;
        int unknownAsks = 0;
        while (true) {
            try {
                if (unknownIds.any() && unknownIds.stillUnknown(WireFormat.schemaId(value), clock.getAsLong())) {
                    throw new BadRecordException(Code.UNKNOWN_SCHEMA, "schema ID " + WireFormat.schemaId(value)
                            + " is not in the schema registry (asked again after a pause)");
                }
                return plan(value, stamper.inspect(value));
            } catch (BadRecordException refused) {
                if (refused.code() != Code.UNKNOWN_SCHEMA || unknownIds.stillUnknown(WireFormat.schemaId(value), clock.getAsLong())) {
                    throw refused;
                }
                int schemaId = WireFormat.schemaId(value);
                // the first value of an unknown ID waits a little: the registry may learn it any moment (a lagging replica,
                // a producer racing its own registration)
                if (!unknownIds.seen(schemaId) && unknownAsks < UnknownSchemaIds.FIRST_PAUSES.length) {
                    sleep(UnknownSchemaIds.FIRST_PAUSES[unknownAsks++]);
                    continue;
                }
                unknownIds.notFound(schemaId, clock.getAsLong());
                throw refused;
            } catch (RegistryUnavailableException outage) {
                if (wait.stopped()) {
                    throw outage;       // stopping: the record stays unprocessed and is read again by the next owner
                }
                long now = clock.getAsLong();
                if (wait.failed(outage.getMessage(), now)) {
                    log.warn("waiting for the schema registry since {} to stamp a value of a new schema ({}); nothing is"
                            + " dead-lettered or skipped meanwhile", Instant.ofEpochMilli(wait.waitingSince()), outage.getMessage());
                }
                sleep(pause);
                pause = Math.min(pause * 2, LONGEST_PAUSE_MILLIS);
            }
        }
    }

    /**
     * The plan of a value whose schema is remembered, without a request; {@link ValueField#LOOKUP} for one not seen yet,
     * which {@link #lookup} then asks for beside the stream thread: a registry that is slow, down, or lagging behind
     * holds only the partitions whose values need it (their records wait set aside), the others stamp on.
     */
    @Override
    public Object inspectNow(byte[] value) {
        if (value == null) {
            return TOMBSTONE;
        }
        if (unknownIds.any() && unknownIds.stillUnknown(WireFormat.schemaId(value), clock.getAsLong())) {
            throw new BadRecordException(Code.UNKNOWN_SCHEMA, "schema ID " + WireFormat.schemaId(value)
                    + " is not in the schema registry (asked again after a pause)");
        }
        // a remembered refusal or a value its schema refuses is thrown as inspect throws it
        Stamping stamping = stamper.remembered(value);
        return stamping == null ? LOOKUP : plan(value, stamping);
    }

    /** The plan of a value {@code stamping} has checked; the registry answers (again). */
    private Object plan(byte[] value, Stamping stamping) {
        if (unknownIds.any()) {
            unknownIds.found(WireFormat.schemaId(value));
        }
        if (wait.waitingSince() >= 0) {
            long began = wait.answered();
            if (began >= 0) {
                log.info("the schema registry answers again after {} s; stamping resumed", (clock.getAsLong() - began) / 1000);
            }
        }
        return stamping.json() ? new JsonPlan(stamping, json.inspect(value, WireFormat.HEADER_BYTES)) : stamping;
    }

    @Override
    public java.util.concurrent.CompletableFuture<Void> lookup(byte[] value) {
        return java.util.concurrent.CompletableFuture.runAsync(() -> {
            try {
                inspect(value);     // waits through an outage here, and remembers the answer (or the ID as unknown)
            } catch (BadRecordException refused) {
                // remembered: inspectNow refuses the value again, and the record goes to the dead-letter topic then
            } catch (RegistryUnavailableException stopping) {
                // the stamper stops: its records stay set aside for the next start (any other failure fails the task)
            }
        }, LOOKUPS);
    }

    @Override
    public byte[] write(byte[] value, Object plan, long id, byte[] digits) {
        if (plan instanceof JsonPlan text) {
            return text.stamping().reframe(value, json.write(value, text.splice(), digits != null ? digits : IdHeader.ascii(id)));
        }
        return plan == TOMBSTONE ? null : ((Stamping) plan).stamp(value, id);
    }

    @Override
    public int maxGrowth() {
        // a JSON member: its name (its digits, quotes and comma are within the processor's margin, as in JSON mode)
        return json == null ? GROWTH : Math.max(GROWTH, stamper.field().length());
    }

    /** A JSON Schema value's plan: its output schema, and where the JSON mode's splice puts the ID in its text. */
    private record JsonPlan(Stamping stamping, JsonIdSplicer.Plan splice) {
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RegistryUnavailableException("interrupted while waiting for the schema registry");
        }
    }
}
