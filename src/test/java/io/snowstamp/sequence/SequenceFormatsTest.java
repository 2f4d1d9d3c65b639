package io.snowstamp.sequence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The three persisted formats of sequence mode: tag definitions, store values, envelopes. */
class SequenceFormatsTest {

    private static final TagDefinitionSerde DEFINITIONS = new TagDefinitionSerde();
    private static final SequenceStateSerde STATES = new SequenceStateSerde();

    private static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex);
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    // ---- what the lease reader reads in the segments changelog

    @Test
    void shouldReadTheLeaseFromTheCheckpointAndWhatASegmentCoversFromItsTag() {
        io.snowstamp.lease.LeaseCodec codec = SequenceTopology.leaseCodec();
        byte[] checkpointKey = SequenceState.CHECKPOINT_KEY.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] checkpoint = STATES.serialize(null, new PartitionCheckpoint(4, 10, 7, "host-a/t1", 1, 2));
        byte[] orderKey = "order".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] segment = STATES.serialize(null, new TagSegment(1020, 1010, 1011, 10, 1, 3));

        assertThat(codec.read(checkpointKey, checkpoint)).isEqualTo(new io.snowstamp.lease.LeaseMark(7, "host-a/t1"));
        assertThat(codec.counter(checkpointKey, checkpoint)).isNull();
        assertThat(codec.covered(checkpointKey, checkpoint)).isEqualTo(-1);
        assertThat(codec.read(orderKey, segment)).isNull();
        assertThat(codec.counter(orderKey, segment)).isEqualTo("order");
        assertThat(codec.covered(orderKey, segment)).as("the segment's end: its holder may number up to it").isEqualTo(1020);
        assertThat(codec.read(null, segment)).isNull();
    }

    // ---- tag definitions

    @Test
    void shouldWriteATagDefinitionInTheDocumentedLayout() {
        TagDefinition definition = new TagDefinition(1001, 1000, 2, 0x0102030405060708L);

        assertThat(hex(DEFINITIONS.serialize("t", definition))).isEqualTo("01"
                + "00000000000003e9"            // start 1001
                + "00000000000003e8"            // step 1000
                + "0000000000000002"            // revision
                + "0102030405060708");          // updatedAt
        assertThat(DEFINITIONS.deserialize("t", DEFINITIONS.serialize("t", definition))).isEqualTo(definition);
        assertThat(DEFINITIONS.deserialize("t", null)).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "",                                                                                  // empty
            "02" + "00000000000003e9" + "00000000000003e8" + "0000000000000002" + "0000000000000000", // version 2
            "01" + "00000000000003e9" + "00000000000003e8" + "0000000000000002",                  // truncated
            "01" + "00000000000003e9" + "00000000000003e8" + "0000000000000002" + "0000000000000000" + "00", // trailing
            "01" + "ffffffffffffffff" + "00000000000003e8" + "0000000000000002" + "0000000000000000", // start -1
            "01" + "00000000000003e9" + "0000000000000000" + "0000000000000002" + "0000000000000000", // step 0
            "01" + "00000000000003e9" + "000000003b9aca01" + "0000000000000002" + "0000000000000000", // step 10^9 + 1
            "01" + "00000000000003e9" + "00000000000003e8" + "ffffffffffffffff" + "0000000000000000", // revision -1
    })
    void shouldRefuseAnUnreadableTagDefinition(String bytes) {
        assertThatThrownBy(() -> DEFINITIONS.deserialize("t", hex(bytes))).isInstanceOf(SerializationException.class);
    }

    @Test
    void shouldPickTheNewerDefinition() {
        TagDefinition one = new TagDefinition(1, 10, 1, 0);
        TagDefinition two = one.withStep(20, 5);

        assertThat(two).isEqualTo(new TagDefinition(1, 20, 2, 5));
        assertThat(TagDefinition.newer(one, two)).isSameAs(two);
        assertThat(TagDefinition.newer(two, one)).isSameAs(two);
        assertThat(TagDefinition.newer(null, one)).isSameAs(one);
        assertThat(TagDefinition.newer(one, null)).isSameAs(one);
        assertThat(TagDefinition.newer(null, null)).isNull();
    }

    // ---- store values

    @Test
    void shouldWriteATagSegmentInTheDocumentedLayout() {
        TagSegment segment = new TagSegment(2000, 1500, 1001, 1000, 3, 0x11L);

        assertThat(hex(STATES.serialize("c", segment))).isEqualTo("04" + "01"
                + "00000000000007d0"            // maxId 2000
                + "00000000000005dc"            // issued 1500
                + "00000000000003e9"            // segmentStart 1001
                + "00000000000003e8"            // step 1000
                + "0000000000000003"            // revision
                + "0000000000000011"            // updatedAt
                + "0000000000000000");          // epoch: unknown
        assertThat(STATES.deserialize("c", STATES.serialize("c", segment))).isEqualTo(segment);
        assertThat(hex(STATES.serialize("c", segment.writtenUnder(7)))).endsWith("0000000000000011" + "0000000000000007");
        assertThat(STATES.deserialize("c", STATES.serialize("c", segment.writtenUnder(7)))).isEqualTo(segment.writtenUnder(7));
        TagSegment none = new TagSegment(999, -1, 0, 1000, 1, 0);
        assertThat(hex(STATES.serialize("c", none))).startsWith("0401" + "00000000000003e7" + "ffffffffffffffff");
        assertThat(STATES.deserialize("c", STATES.serialize("c", none))).isEqualTo(none);
    }

    @Test
    void shouldReadATagSegmentOfVersion1AsEverythingReservedIssued() {
        SequenceState state = STATES.deserialize("c", hex("01" + "01"
                + "00000000000007d0"            // maxId 2000, no issued
                + "00000000000003e9"            // segmentStart 1001
                + "00000000000003e8"            // step 1000
                + "0000000000000003"            // revision
                + "0000000000000011"));         // updatedAt

        assertThat(state).isEqualTo(new TagSegment(2000, 2000, 1001, 1000, 3, 0x11L));
    }

    @Test
    void shouldReadATagSegmentOfVersion3AsOfAnUnknownWriter() {
        SequenceState state = STATES.deserialize("c", hex("03" + "01" + "00000000000007d0" + "00000000000005dc"
                + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011"));

        assertThat(state).isEqualTo(new TagSegment(2000, 1500, 1001, 1000, 3, 0x11L, 0));
    }

    @Test
    void shouldReadAPartitionCheckpointOfVersion1() {
        assertThat(STATES.deserialize("c", hex("01" + "02" + "00000004" + "000000000000004d" + "0000000000000002"
                + "0003" + "68c3a9" + "0000000000000021" + "0000000000000022")))
                .isEqualTo(new PartitionCheckpoint(4, 77, 2, "h\u00e9", 0x21L, 0x22L, false, false, false));
    }

    @Test
    void shouldReadAPartitionCheckpointOfVersion2AsWithoutTheCleanCloseMarker() {
        assertThat(STATES.deserialize("c", hex("02" + "02" + "00000004" + "000000000000004d" + "0000000000000002"
                + "0003" + "68c3a9" + "0000000000000021" + "0000000000000022")))
                .isEqualTo(new PartitionCheckpoint(4, 77, 2, "h\u00e9", 0x21L, 0x22L, false, false, false));
    }

    @Test
    void shouldReadAPartitionCheckpointOfVersion3AsOfAnAtLeastOnceHolderThatNamedNoWriters() {
        assertThat(STATES.deserialize("c", hex("03" + "02" + "00000004" + "000000000000004d" + "0000000000000002"
                + "0003" + "68c3a9" + "0000000000000021" + "0000000000000022" + "01")))
                .isEqualTo(new PartitionCheckpoint(4, 77, 2, "h\u00e9", 0x21L, 0x22L, true, false, false));
    }

    @Test
    void shouldWriteAPartitionCheckpointInTheDocumentedLayout() {
        PartitionCheckpoint checkpoint = new PartitionCheckpoint(4, 77, 2, "h\u00e9", 0x21L, 0x22L);

        assertThat(hex(STATES.serialize("c", checkpoint))).isEqualTo("04" + "02"
                + "00000004"                    // partitions
                + "000000000000004d"            // coveredOffset 77
                + "0000000000000002"            // epoch
                + "0003" + "68c3a9"             // holder "hé"
                + "0000000000000021"            // acquiredAt
                + "0000000000000022"            // checkpointAt
                + "00"                          // closed: no
                + "00");                        // exactlyOnce: no
        assertThat(hex(STATES.serialize("c", checkpoint.closedCleanly()))).endsWith("0000000000000022" + "01" + "00");
        PartitionCheckpoint exactlyOnce = checkpoint.coveringEarlierHolders();
        assertThat(hex(STATES.serialize("c", exactlyOnce))).endsWith("0000000000000022" + "00" + "01");
        assertThat(STATES.deserialize("c", STATES.serialize("c", exactlyOnce))).isEqualTo(exactlyOnce);
        assertThat(STATES.deserialize("c", STATES.serialize("c", checkpoint))).isEqualTo(checkpoint);
        assertThat(STATES.deserialize("c", STATES.serialize("c", checkpoint.closedCleanly()))).isEqualTo(checkpoint.closedCleanly());
        assertThat(STATES.deserialize("c", STATES.serialize("c", PartitionCheckpoint.NONE))).isEqualTo(PartitionCheckpoint.NONE);
    }

    @Test
    void shouldRoundTripRandomStoreValues() {
        Random random = new Random(42);
        for (int i = 0; i < 2_000; i++) {
            long maxId = random.nextLong() & Long.MAX_VALUE;
            SequenceState state = random.nextBoolean()
                    ? randomSegment(random, maxId)
                    : new PartitionCheckpoint(random.nextInt(1000), random.nextLong() & Long.MAX_VALUE, random.nextInt(100),
                    "holder-" + random.nextInt(), random.nextLong(), random.nextLong(), random.nextBoolean(), random.nextBoolean());
            assertThat(STATES.deserialize("c", STATES.serialize("c", state))).isEqualTo(state);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "",
            "02",
            "0201",
            // version 5, version 0
            "0501" + "00000000000007d0" + "00000000000005dc" + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011",
            "0001" + "00000000000007d0" + "00000000000005dc" + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011",
            // kind 3
            "0203" + "00000000000007d0" + "00000000000005dc" + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011",
            // truncated, trailing byte
            "0201" + "00000000000007d0" + "00000000000005dc" + "00000000000003e9" + "00000000000003e8" + "0000000000000003",
            "0201" + "00000000000007d0" + "00000000000005dc" + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011" + "ff",
            // a version 1 segment read as version 2 is one long short; a version 2 segment read as version 1 one long long
            "0201" + "00000000000007d0" + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011",
            "0101" + "00000000000007d0" + "00000000000005dc" + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011",
            // maxId -1; segment start above maxId; issued above maxId; issued -2 (issued below the segment is a segment reserved ahead)
            "0201" + "ffffffffffffffff" + "ffffffffffffffff" + "ffffffffffffffff" + "0000000000000000" + "0000000000000000" + "0000000000000000",
            "0201" + "00000000000003e8" + "00000000000003e8" + "00000000000007d0" + "00000000000003e8" + "0000000000000003" + "0000000000000011",
            "0201" + "00000000000007d0" + "00000000000007d1" + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011",
            "0201" + "00000000000007d0" + "fffffffffffffffe" + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011",
            // checkpoints: negative holder length, truncated holder, negative partition count
            "0202" + "00000004" + "000000000000004d" + "0000000000000002" + "ffff" + "0000000000000021" + "0000000000000022",
            "0202" + "00000004" + "000000000000004d" + "0000000000000002" + "0009" + "68c3a9",
            "0202" + "ffffffff" + "000000000000004d" + "0000000000000002" + "0000" + "0000000000000021" + "0000000000000022",
            // version 3 checkpoints: the closed flag missing, or neither 0 nor 1; a version 2 one with a flag is a trailing byte
            "0302" + "00000004" + "000000000000004d" + "0000000000000002" + "0000" + "0000000000000021" + "0000000000000022",
            "0302" + "00000004" + "000000000000004d" + "0000000000000002" + "0000" + "0000000000000021" + "0000000000000022" + "02",
            "0202" + "00000004" + "000000000000004d" + "0000000000000002" + "0000" + "0000000000000021" + "0000000000000022" + "01",
            // version 4 segments: the epoch missing, or negative
            "0401" + "00000000000007d0" + "00000000000005dc" + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011",
            "0401" + "00000000000007d0" + "00000000000005dc" + "00000000000003e9" + "00000000000003e8" + "0000000000000003" + "0000000000000011" + "ffffffffffffffff",
            // version 4 checkpoints: the exactlyOnce flag missing, or neither 0 nor 1
            "0402" + "00000004" + "000000000000004d" + "0000000000000002" + "0000" + "0000000000000021" + "0000000000000022" + "00",
            "0402" + "00000004" + "000000000000004d" + "0000000000000002" + "0000" + "0000000000000021" + "0000000000000022" + "00" + "02",
    })
    void shouldRefuseAnUnreadableStoreValue(String bytes) {
        assertThatThrownBy(() -> STATES.deserialize("c", hex(bytes))).isInstanceOf(SerializationException.class);
    }

    // ---- envelopes

    @Test
    void shouldWriteAnEnvelopeInTheDocumentedLayout() {
        Envelope envelope = new Envelope(new byte[] {'k'}, null, new TagDefinition(1, 2, 3, 4));

        assertThat(hex(envelope.encode())).isEqualTo("01"
                + "00000001" + "6b"             // key "k"
                + "ffffffff"                    // value null
                + "01"                          // definition present
                + "0000000000000001" + "0000000000000002" + "0000000000000003" + "0000000000000004");
        assertThat(hex(new Envelope(null, new byte[0], null).encode())).isEqualTo("01" + "ffffffff" + "00000000" + "00");
    }

    @Test
    void shouldRoundTripEnvelopes() {
        Random random = new Random(7);
        for (int i = 0; i < 1_000; i++) {
            byte[] key = random.nextInt(5) == 0 ? null : randomBytes(random);
            byte[] value = random.nextInt(5) == 0 ? null : randomBytes(random);
            TagDefinition definition = random.nextBoolean() ? null
                    : new TagDefinition(random.nextInt(1_000_000), 1 + random.nextInt(1000), random.nextInt(10), random.nextLong());
            Envelope decoded = Envelope.decode(new Envelope(key, value, definition).encode());
            assertThat(decoded.key()).isEqualTo(key);
            assertThat(decoded.value()).isEqualTo(value);
            assertThat(decoded.definition()).isEqualTo(definition);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "02ffffffffffffffff00", "01ffffffff", "01ffffffffffffffff02", "01ffffffffffffffff0000",
            "0100000005" + "6b" + "ffffffff00", "01fffffffe" + "ffffffff00", "01ffffffffffffffff01" + "00"})
    void shouldRefuseAnUnreadableEnvelope(String bytes) {
        assertThatThrownBy(() -> Envelope.decode(hex(bytes))).isInstanceOf(SerializationException.class);
    }

    @Test
    void shouldRefuseANullEnvelope() {
        assertThatThrownBy(() -> Envelope.decode(null)).isInstanceOf(SerializationException.class);
    }

    /** A valid segment: issued from -1 (raised) or the one before segmentStart (reserved) up to maxId. */
    private static TagSegment randomSegment(Random random, long maxId) {
        long segmentStart = random.nextBoolean() ? -1 : maxId / 2;
        long lowest = segmentStart < 0 ? -1 : segmentStart - 1;
        long issued = maxId - (random.nextLong() & Long.MAX_VALUE) % (maxId - lowest + 1);
        return new TagSegment(maxId, issued, segmentStart, random.nextInt(1000), random.nextInt(9), random.nextLong(), random.nextInt(100));
    }

    private static byte[] randomBytes(Random random) {
        byte[] bytes = new byte[random.nextInt(40)];
        random.nextBytes(bytes);
        return Arrays.copyOf(bytes, bytes.length);
    }
}
