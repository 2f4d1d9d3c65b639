package io.snowstamp.schema;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;

/**
 * What one input schema's values get, per value: the frame's schema ID replaced by the output schema's,
 * and the ID's bytes appended (Avro: its zig-zag varint; Protobuf: the field's tag and the ID as a
 * varint). Immutable and thread-safe; the stream threads share one per input schema.
 */
public final class Stamping {
    static {
        // the Avro classes an overwrite's decode may first use deep in a recursive value, initialised here on a shallow
        // stack: a stack overflow inside a class's initialiser leaves the class unusable for every later value
        for (String avroClass : new String[] {"org.apache.avro.generic.GenericData$Array", "org.apache.avro.util.Utf8",
            "org.apache.avro.generic.PrimitivesArrays$IntArray", "org.apache.avro.generic.PrimitivesArrays$LongArray",
            "org.apache.avro.generic.PrimitivesArrays$BooleanArray", "org.apache.avro.generic.PrimitivesArrays$FloatArray",
            "org.apache.avro.generic.PrimitivesArrays$DoubleArray"}) {
            try {
                Class.forName(avroClass, true, Stamping.class.getClassLoader());
            } catch (ClassNotFoundException another) {
                // another Avro version: its classes load as they are used
            }
        }
    }

    private final Evolution.Kind kind;
    private final int outputId;
    /** Protobuf: the field's tag; empty for Avro. */
    private final byte[] tag;
    private final boolean zigZag;
    /** Avro, {@code overwrite}: the schema the value is decoded and written with; the field's position. */
    private final Schema overwriteSchema;
    private final int overwritePosition;
    private final ValueCheck check;

    private Stamping(Evolution.Kind kind, int outputId, byte[] tag, boolean zigZag, Schema overwriteSchema, int overwritePosition,
                     ValueCheck check) {
        this.kind = kind;
        this.check = check;
        this.outputId = outputId;
        this.tag = tag;
        this.zigZag = zigZag;
        this.overwriteSchema = overwriteSchema;
        this.overwritePosition = overwritePosition;
    }

    /**
     * Avro values of input schema {@code inputId} ({@code input}, its text) evolved as {@code evolution}, written with
     * output schema {@code outputId}.
     */
    public static Stamping avro(String input, int inputId, Evolution evolution, String field, int outputId) {
        Schema overwrite = evolution.kind() == Evolution.Kind.OVERWRITE ? AvroEvolution.parse(evolution.schema()) : null;
        return new Stamping(evolution.kind(), outputId, new byte[0], true, overwrite,
                overwrite == null ? -1 : overwrite.getField(field).pos(), new AvroValueCheck(AvroEvolution.parse(input), inputId));
    }

    /** Protobuf values of input schema {@code inputId} evolved as {@code evolution}, written with output schema {@code outputId}. */
    public static Stamping protobuf(int inputId, Evolution evolution, int outputId) {
        return new Stamping(evolution.kind(), outputId, Varints.bytes((long) evolution.fieldNumber() << 3), false, null, -1,
                // under keep the field is the input's own, of any type: nothing appended, no wire type to insist on
                new ProtobufValueCheck(evolution.kind() == Evolution.Kind.APPEND ? evolution.fieldNumber() : 0, inputId));
    }

    /**
     * JSON Schema values written with output schema {@code outputId}: the ID is spliced into the JSON text, and the
     * text checked, by the JSON mode's code ({@link #json()}); here only the frame's schema ID is replaced ({@link #reframe}).
     */
    public static Stamping json(int outputId) {
        return new Stamping(Evolution.Kind.APPEND, outputId, new byte[0], false, null, -1, JSON_TEXT);
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

    private byte[] overwrite(byte[] value, long id) {
        try {
            BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(value, WireFormat.HEADER_BYTES,
                    value.length - WireFormat.HEADER_BYTES, null);
            GenericData.Record record = new GenericDatumReader<GenericData.Record>(overwriteSchema).read(null, decoder);
            if (!decoder.isEnd()) {
                throw new IOException("bytes left after the record");
            }
            record.put(overwritePosition, id);
            ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 10);
            out.write(new byte[WireFormat.HEADER_BYTES]);
            BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
            new GenericDatumWriter<GenericData.Record>(overwriteSchema).write(record, encoder);
            encoder.flush();
            byte[] bytes = out.toByteArray();
            WireFormat.putSchemaId(bytes, outputId);
            return bytes;
        } catch (IOException | RuntimeException e) {
            throw new BadRecordException(Code.INVALID_VALUE, "the value does not decode with its Avro schema: " + e.getMessage());
        } catch (StackOverflowError e) {
            // a recursive value the walk could follow, nested too deep for Avro's reader on this thread's stack
            throw new BadRecordException(Code.INVALID_VALUE, "the value is nested too deep to decode with its Avro schema");
        }
    }
}
