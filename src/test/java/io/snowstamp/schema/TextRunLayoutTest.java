package io.snowstamp.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import io.snowstamp.bench.AvroSampleValues;
import io.snowstamp.config.StampSettings.OnExistingField;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

/**
 * A run of text fields checked against the layout of an earlier value: it never passes a run the walk would refuse, nor
 * ends it elsewhere than the walk does, whatever the bytes; and it is tried again only after its pause.
 */
class TextRunLayoutTest {
    private static final int FIELDS = 12;

    @Test
    void shouldEndARunWhereTheWalkEndsItOrNotAtAllWhateverTheBytes() {
        Random random = new Random(42);
        AtomicLong clock = new AtomicLong();
        TextRunLayout layout = new TextRunLayout(FIELDS, clock::get);
        int matched = 0;
        int missed = 0;
        for (int round = 0; round < 2_000; round++) {
            byte[] noted = run(random, random.nextInt(4) == 0 ? 100 : 63);
            int pos = random.nextInt(3);
            byte[] framed = shifted(noted, pos);
            clock.addAndGet(2_000);      // past any pause
            layout.walked(framed, pos);
            for (int variant = 0; variant < 20; variant++) {
                byte[] value = mutated(random, framed, pos);
                int end = layout.matched(value, pos);
                int walked = walk(value, pos);
                if (end >= 0) {
                    matched++;
                    assertThat(end).as("where the run ends, round %d variant %d", round, variant).isEqualTo(walked);
                } else {
                    missed++;
                }
                if (layout.matched(framed, pos) < 0) {
                    clock.addAndGet(2_000);
                    layout.walked(framed, pos);
                }
            }
        }
        assertThat(matched).as("runs passed by a layout").isGreaterThan(1_000);
        assertThat(missed).as("runs left to the walk").isGreaterThan(1_000);
    }

    @Test
    void shouldNoteALayoutAgainOnlyAfterAPauseThatDoublesWhileLayoutsDoNotHold() {
        AtomicLong clock = new AtomicLong(1_000);
        TextRunLayout layout = new TextRunLayout(FIELDS, clock::get);
        Random random = new Random(7);
        byte[] first = run(random, 63);
        byte[] other = run(random, 63);
        while (Arrays.equals(lengthBytes(other), lengthBytes(first))) {
            other = run(random, 63);
        }

        layout.walked(first, 0);
        assertThat(layout.noted()).isTrue();
        long pause = 1;
        for (int miss = 0; miss < 14; miss++) {
            assertThat(layout.matched(other, 0)).as("another layout").isEqualTo(-1);
            assertThat(layout.noted()).as("a layout that did not hold, dropped").isFalse();
            layout.walked(first, 0);
            assertThat(layout.noted()).as("noted within its pause of %d ms", pause).isFalse();
            clock.addAndGet(pause - 1);
            layout.walked(first, 0);
            assertThat(layout.noted()).as("noted a millisecond before its pause of %d ms ends", pause).isFalse();
            clock.addAndGet(1);
            layout.walked(first, 0);
            assertThat(layout.noted()).as("noted once its pause of %d ms is over", pause).isTrue();
            pause = Math.min(1024, pause * 2);
        }
        assertThat(pause).isEqualTo(1024);
        assertThat(layout.matched(first, 0)).as("a layout that holds").isEqualTo(first.length);
        layout.matched(other, 0);
        clock.addAndGet(1);
        layout.walked(first, 0);
        assertThat(layout.noted()).as("after a layout that held: the pause back to 1 ms").isTrue();
    }

    @Test
    void shouldRefuseEveryCutOrLongerValueOfTheBenchsSchemaWithItsLayoutNoted() {
        Schema schema = AvroSampleValues.schema(4096);
        Stamping stamping = Stamping.avro(schema.toString(), 7, AvroEvolution.evolve(schema.toString(), "id", OnExistingField.REJECT), "id", 8);
        byte[] valid = AvroSampleValues.value(1, schema, 7);
        for (int n = 0; n < 100; n++) {
            stamping.check(AvroSampleValues.value(n, schema, 7));
        }
        for (int cut = valid.length - 1; cut > 5; cut -= 7) {
            stamping.check(valid);      // the layout noted again (its pause is at most a second: the clock is real)
            byte[] shorter = Arrays.copyOf(valid, cut);
            BadRecordException refused = catchThrowableOfType(() -> stamping.check(shorter), BadRecordException.class);
            assertThat(refused).as("cut to %d bytes", cut).isNotNull();
            assertThat(refused.code()).isEqualTo(Code.INVALID_VALUE);
        }
        BadRecordException longer = catchThrowableOfType(() -> stamping.check(Arrays.copyOf(valid, valid.length + 1)), BadRecordException.class);
        assertThat(longer.getMessage()).contains("1 bytes are left over");
    }

    @Test
    void shouldGiveEveryThreadTheWalksVerdictWhileTheyShareOneLayout() throws Exception {
        Random random = new Random(3);
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            byte[] run = run(random, i % 3 == 0 ? 100 : 63);
            values.add(run);
            values.add(Arrays.copyOf(run, run.length - 1 - random.nextInt(run.length - 1)));
        }
        AtomicLong ticks = new AtomicLong();
        TextRunLayout layout = new TextRunLayout(FIELDS, ticks::incrementAndGet);      // a millisecond a read: pauses end by count
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                results.add(threads.submit(() -> {
                    Random order = new Random(seed);
                    int passed = 0;
                    for (int n = 0; n < 200_000; n++) {
                        byte[] value = values.get(n % 1_000 < 900 ? 2 : order.nextInt(values.size()));      // 2: of one-byte lengths
                        int end = layout.matched(value, 0);
                        if (end < 0) {
                            layout.walked(value, 0);
                        } else {
                            passed++;
                            if (end != walk(value, 0)) {
                                throw new AssertionError("a run ended at " + end + ", walked to " + walk(value, 0));
                            }
                        }
                    }
                    return passed;
                }));
            }
            long passed = 0;
            for (Future<Integer> result : results) {
                passed += result.get();     // (a thread's verdicts are checked inside it)
            }
            assertThat(passed).as("runs passed by a layout, all threads").isGreaterThan(10_000);
        } finally {
            threads.shutdownNow();
        }
    }

    /** The run's end as Avro reads it: zig-zag varint lengths of any size; -1 where it refuses the run. */
    private static int walk(byte[] b, int pos) {
        for (int field = 0; field < FIELDS; field++) {
            long raw = 0;
            int shift = 0;
            while (true) {
                if (pos >= b.length || shift > 63) {
                    return -1;
                }
                int next = b[pos++];
                raw |= (long) (next & 0x7F) << shift;
                shift += 7;
                if (next >= 0) {
                    break;
                }
            }
            long length = (raw >>> 1) ^ -(raw & 1);
            if (length < 0 || length > b.length - pos) {
                return -1;
            }
            pos += (int) length;
        }
        return pos;
    }

    /** {@link #FIELDS} text fields of 0 to {@code longest} bytes, as Avro writes them. */
    private static byte[] run(Random random, int longest) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int field = 0; field < FIELDS; field++) {
            int length = random.nextInt(longest + 1);
            long zigZag = (long) length << 1;
            while ((zigZag & ~0x7FL) != 0) {
                out.write((int) ((zigZag & 0x7F) | 0x80));
                zigZag >>>= 7;
            }
            out.write((int) zigZag);
            for (int i = 0; i < length; i++) {
                out.write('a' + random.nextInt(26));
            }
        }
        return out.toByteArray();
    }

    private static byte[] shifted(byte[] run, int pos) {
        byte[] framed = new byte[pos + run.length];
        System.arraycopy(run, 0, framed, pos, run.length);
        return framed;
    }

    /** The value unchanged, its text changed, bytes flipped, or cut, lengthened or shortened. */
    private static byte[] mutated(Random random, byte[] value, int pos) {
        byte[] copy = value.clone();
        switch (random.nextInt(6)) {
            case 0 -> { }
            case 1 -> {
                for (int i = pos; i < copy.length; i++) {
                    copy[i] = copy[i] >= 'a' && copy[i] <= 'z' ? (byte) ('a' + random.nextInt(26)) : copy[i];
                }
            }
            case 2 -> {
                for (int flips = 1 + random.nextInt(3); flips > 0 && copy.length > pos; flips--) {
                    copy[pos + random.nextInt(copy.length - pos)] ^= (byte) (1 << random.nextInt(8));
                }
            }
            case 3 -> copy = Arrays.copyOf(copy, pos + random.nextInt(copy.length - pos + 1));
            case 4 -> copy = Arrays.copyOf(copy, copy.length + 1 + random.nextInt(70));
            default -> {
                int at = pos + random.nextInt(copy.length - pos);
                copy[at] = (byte) random.nextInt(256);
            }
        }
        return copy;
    }

    private static byte[] lengthBytes(byte[] run) {
        byte[] lengths = new byte[FIELDS];
        for (int field = 0, pos = 0; field < FIELDS; field++) {
            lengths[field] = run[pos];
            pos += 1 + (run[pos] >>> 1);
        }
        return lengths;
    }
}
