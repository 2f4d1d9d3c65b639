package io.snowstamp.schema;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import org.apache.avro.Schema;

/**
 * What one input schema's values get, per value: the frame's schema ID replaced by the output schema's,
 * and the ID's bytes appended (Avro: its zig-zag varint; Protobuf: the field's tag and the ID as a
 * varint), or under Avro {@code overwrite} put in place of the field's. Immutable and thread-safe; the stream threads share one per input schema.
 */
public final class Stamping {
    private final Evolution.Kind kind;
    private final int outputId;
    /** Protobuf: the field's tag; empty for Avro. */
    private final byte[] tag;
    private final boolean zigZag;
    private final ValueCheck check;

    private Stamping(Evolution.Kind kind, int outputId, byte[] tag, boolean zigZag, ValueCheck check) {
        this.kind = kind;
        this.check = check;
        this.outputId = outputId;
        this.tag = tag;
        this.zigZag = zigZag;
    }

    /**
     * Avro values of input schema {@code inputId} ({@code input}, its text) evolved as {@code evolution}, written with
     * output schema {@code outputId}.
     */
    public static Stamping avro(String input, int inputId, Evolution evolution, String field, int outputId) {
        Schema writer = AvroEvolution.parse(input);
        int overwritten = evolution.kind() == Evolution.Kind.OVERWRITE ? writer.getField(field).pos() : -1;
        return new Stamping(evolution.kind(), outputId, new byte[0], true, new AvroValueCheck(writer, inputId, overwritten));
    }

    /** Protobuf values of input schema {@code inputId} evolved as {@code evolution}, written with output schema {@code outputId}. */
    public static Stamping protobuf(int inputId, Evolution evolution, int outputId) {
        return new Stamping(evolution.kind(), outputId, Varints.bytes((long) evolution.fieldNumber() << 3), false,
                // under keep the field is the input's own, of any type: nothing appended, no wire type to insist on
                new ProtobufValueCheck(evolution.kind() == Evolution.Kind.APPEND ? evolution.fieldNumber() : 0, inputId));
    }

    /**
     * JSON Schema values written with output schema {@code outputId}: the ID is spliced into the JSON text, and the
     * text checked, by the JSON mode's code ({@link #json()}); here only the frame's schema ID is replaced ({@link #reframe}).
     */
    public static Stamping json(int outputId) {
        return new Stamping(Evolution.Kind.APPEND, outputId, new byte[0], false, JSON_TEXT);
    }

    /** JSON Schema values: their text is checked where the ID is spliced in, by the JSON mode's code. */
    private static final ValueCheck JSON_TEXT = value -> {
    };

    /** Whether the value is JSON text whose ID the caller splices in (then {@link #reframe}), rather than {@link #stamp}. */
    public boolean json() {
        return check == JSON_TEXT;
    }

    /** {@code spliced}, the framed {@code value} with the ID spliced into its text (or {@code value} itself), framed with the output ID. */
    public byte[] reframe(byte[] value, byte[] spliced) {
        byte[] out = spliced == value ? value.clone() : spliced;
        WireFormat.putSchemaId(out, outputId);
        return out;
    }

    /**
     * Checks that the framed value is exactly one value of its schema (bytes neither missing nor left over).
     *
     * @throws BadRecordException {@code INVALID_VALUE} when it is not
     */
    public void check(byte[] value) {
        check.check(value);
    }

    /** The output schema's ID. */
    public int outputId() {
        return outputId;
    }

    /** The stamped value of a framed input value (not changed). */
    public byte[] stamp(byte[] value, long id) {
        return switch (kind) {
            case APPEND -> append(value, id);
            case KEEP -> reframed(value);
            case OVERWRITE -> overwrite(value, id);
        };
    }

    private byte[] append(byte[] value, long id) {
        long encoded = zigZag ? Varints.zigZag(id) : id;
        byte[] out = new byte[value.length + tag.length + Varints.size(encoded)];
        System.arraycopy(value, 0, out, 0, value.length);
        WireFormat.putSchemaId(out, outputId);
        System.arraycopy(tag, 0, out, value.length, tag.length);
        Varints.write(encoded, out, value.length + tag.length);
        return out;
    }

    private byte[] reframed(byte[] value) {
        if (WireFormat.schemaId(value) == outputId) {
            return value;
        }
        byte[] out = value.clone();
        WireFormat.putSchemaId(out, outputId);
        return out;
    }

    /**
     * Avro, {@code overwrite}: the long field's varint replaced by the ID's, in place: every other byte is the producer's
     * own, and nothing is decoded (a decode cost as much as the value asks: Avro's cap of null items in an 11-byte value
     * was a second and a half). The value passed the check, so the field is whole where the walk finds it.
     */
    private byte[] overwrite(byte[] value, long id) {
        int start = ((AvroValueCheck) check).fieldStart(value);
        int end = start;
        while (value[end] < 0) {
            end++;
        }
        end++;
        long encoded = Varints.zigZag(id);
        int size = Varints.size(encoded);
        byte[] out = new byte[value.length - (end - start) + size];
        System.arraycopy(value, 0, out, 0, start);
        Varints.write(encoded, out, start);
        System.arraycopy(value, end, out, start + size, value.length - end);
        WireFormat.putSchemaId(out, outputId);
        return out;
    }
}
