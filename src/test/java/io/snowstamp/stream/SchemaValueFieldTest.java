package io.snowstamp.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.snowstamp.BadRecordException;
import io.snowstamp.config.SchemaRegistrySettings.SubjectStrategy;
import io.snowstamp.config.StampSettings;
import io.snowstamp.config.StampSettings.HeaderFormat;
import io.snowstamp.config.StampSettings.JsonType;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.config.StampSettings.ValueFormat;
import io.snowstamp.schema.RegisteredSchema;
import io.snowstamp.schema.RegistryUnavailableException;
import io.snowstamp.BadRecordException;
import io.snowstamp.schema.SchemaRegistryClient;
import io.snowstamp.schema.SchemaStamper;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SchemaValueFieldTest {
    private static final String RECORD = "{\"type\":\"record\",\"name\":\"E\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"}]}";
    private static final byte[] VALUE = {0, 0, 0, 0, 1, 2, 'x'};

    /** Schema 1 is RECORD, 2 is a primitive; down for the first {@code outage} calls. */
    private static final class FlakyRegistry implements SchemaRegistryClient {
        final AtomicInteger outage = new AtomicInteger();
        final AtomicInteger calls = new AtomicInteger();
        /** Schema 3 (RECORD) is unknown to the first this many requests for it. */
        final AtomicInteger unknownFor = new AtomicInteger();

        @Override
        public RegisteredSchema schema(int id) {
            calls.incrementAndGet();
            if (outage.getAndDecrement() > 0) {
                throw new RegistryUnavailableException("the schema registry did not answer: http://r/schemas/ids/1: HTTP 503");
            }
            if (id == 3 && unknownFor.getAndDecrement() > 0) {
                throw new BadRecordException(BadRecordException.Code.UNKNOWN_SCHEMA, "schema ID 3 is not in the schema registry");
            }
            return new RegisteredSchema("AVRO", id == 1 || id == 3 ? RECORD : "\"string\"", List.of());
        }

        @Override
        public RegisteredSchema latest(String subject) {
            return null;
        }

        @Override
        public int register(String subject, RegisteredSchema schema) {
            return 100;
        }
    }

    private final FlakyRegistry registry = new FlakyRegistry();
    private final SchemaRegistryWait wait = new SchemaRegistryWait();
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final SchemaValueField field = new SchemaValueField(new SchemaStamper(
            new StampSettings(null, JsonType.NUMBER, OnExistingField.REJECT, 64, true, HeaderFormat.TEXT, ValueFormat.AVRO, "id", 0),
            SubjectStrategy.TOPIC, "out", registry, 10), wait, now::get);

    @Test
    void shouldWaitForTheRegistryAndThenStampTheValue() {
        registry.outage.set(3);

        Object plan = field.inspect(VALUE);

        assertThat(registry.calls).hasValue(4);
        assertThat(wait.failures()).isEqualTo(3);
        assertThat(wait.waitingSince()).as("not waiting any more").isEqualTo(-1);
        assertThat(field.write(VALUE, plan, 1L, null)).containsExactly(0, 0, 0, 0, 100, 2, 'x', 2);
    }

    @Test
    void shouldStampATombstoneInTheHeadersOnlyWithoutAskingTheRegistry() {
        Object plan = field.inspect(null);

        assertThat(field.write(null, plan, 1L, null)).isNull();
        assertThat(registry.calls).hasValue(0);
    }

    @Test
    void shouldAskAgainForAnUnknownSchemaIdAndStampItsValueOnceTheRegistryKnowsIt() {
        registry.unknownFor.set(2);
        byte[] value = {0, 0, 0, 0, 3, 2, 'x'};

        Object plan = field.inspect(value);

        assertThat(registry.calls).hasValue(3);
        assertThat(field.write(value, plan, 1L, null)).containsExactly(0, 0, 0, 0, 100, 2, 'x', 2);
    }

    @Test
    void shouldDeadLetterAnUnknownIdAfterAShortWaitThenAskAgainAfterGrowingPausesNeverForGood() {
        registry.unknownFor.set(Integer.MAX_VALUE);
        byte[] value = {0, 0, 0, 0, 3, 2, 'x'};

        assertThat(catchThrowableOfType(BadRecordException.class, () -> field.inspect(value)).code())
                .isEqualTo(BadRecordException.Code.UNKNOWN_SCHEMA);
        assertThat(registry.calls).as("asked, then again after each of the first pauses").hasValue(5);
        catchThrowableOfType(BadRecordException.class, () -> field.inspect(value));
        assertThat(registry.calls).as("within the pause: not asked").hasValue(5);
        now.addAndGet(1_000);
        catchThrowableOfType(BadRecordException.class, () -> field.inspect(value));
        assertThat(registry.calls).as("after it: asked once, no wait").hasValue(6);
        now.addAndGet(1_000);
        catchThrowableOfType(BadRecordException.class, () -> field.inspect(value));
        assertThat(registry.calls).as("the pause doubled to 2 s").hasValue(6);

        registry.unknownFor.set(0);
        now.addAndGet(1_000);
        assertThat(field.write(value, field.inspect(value), 1L, null)).containsExactly(0, 0, 0, 0, 100, 2, 'x', 2);
    }

    @Test
    void shouldShowTheWaitWhileItLasts() throws Exception {
        registry.outage.set(Integer.MAX_VALUE);
        Thread waiting = new Thread(() -> catchThrowableOfType(RegistryUnavailableException.class, () -> field.inspect(VALUE)));
        waiting.start();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (wait.failures() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(wait.waitingSince()).isEqualTo(1_000_000);
        assertThat(wait.reason()).contains("HTTP 503");

        wait.stop();
        waiting.join(30_000);
        assertThat(waiting.isAlive()).as("a stopping stamper stops waiting").isFalse();
    }

    @Test
    void shouldSendASchemaThatCannotTakeTheFieldToTheDeadLetterTopicWithItsReason() {
        BadRecordException bad = catchThrowableOfType(BadRecordException.class, () -> field.inspect(new byte[] {0, 0, 0, 0, 2, 0}));
        assertThat(bad.code().header()).isEqualTo("not-record");
        assertThat(catchThrowableOfType(BadRecordException.class, () -> field.inspect(new byte[] {'{', '}'})).code().header())
                .isEqualTo("no-magic-byte");
    }

    @Test
    void shouldLogTheFirstFailureAndThenOneAMinute() {
        assertThat(wait.failed("a", 0)).isTrue();
        assertThat(wait.failed("b", 59_999)).isFalse();
        assertThat(wait.failed("c", 60_000)).isTrue();
        assertThat(wait.answered()).isZero();
    }
}
