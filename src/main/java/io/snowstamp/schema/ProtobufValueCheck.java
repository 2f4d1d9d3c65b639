package io.snowstamp.schema;

import com.google.protobuf.CodedInputStream;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;

import java.io.IOException;

/**
 * A Protobuf payload walked with protobuf-java's {@link CodedInputStream}: every field of the message
 * skipped to the end (tags, varints, fixed widths, lengths, groups), nothing decoded. A length that
 * runs past the end, a tag of field 0 or of an unknown wire type, an unmatched group end: refused.
 * The contents of nested messages are skipped as bytes (their lengths are checked, not their fields).
 * The ID's own field number, when the value already carries it, must be a varint: the appended ID
 * replaces a varint (the last value wins), but another wire type under the same number breaks readers.
 */
final class ProtobufValueCheck implements ValueCheck {
    private static final int VARINT = 0;

    private final int fieldNumber;
    private final int schemaId;

    /** @param fieldNumber the number the ID is appended under; 0: none (nothing appended) */
    ProtobufValueCheck(int fieldNumber, int schemaId) {
        this.fieldNumber = fieldNumber;
        this.schemaId = schemaId;
    }

    @Override
    public void check(byte[] value) {
        int start = WireFormat.protobufPayloadStart(value);
        CodedInputStream in = CodedInputStream.newInstance(value, start, value.length - start);
        try {
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                if (tag >>> 3 == fieldNumber && (tag & 7) != VARINT) {
                    throw invalid("it carries field " + fieldNumber + ", the ID's number, with wire type " + (tag & 7)
                            + ", not a varint");
                }
                if (!in.skipField(tag)) {
                    throw invalid("a group ends that never started");
                }
            }
        } catch (IOException e) {   // InvalidProtocolBufferException: cut off, a bad tag or wire type
            throw invalid(e.getMessage());
        }
    }

    private BadRecordException invalid(String why) {
        return new BadRecordException(Code.INVALID_VALUE, "not a message of Protobuf schema ID " + schemaId + ": " + why);
    }
}
