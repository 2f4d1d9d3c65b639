package io.snowstamp.sequence;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import org.apache.kafka.common.utils.Utils;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** What a tag may be, and which partition it lives in. */
public final class Tags {
    /** Longest tag, in UTF-16 chars. */
    public static final int MAX_LENGTH = 200;

    private Tags() {
    }

    /**
     * Why {@code tag} is not a valid tag, or null when it is: 1-200 characters, no control characters
     * (they would break header and log lines, and the store keeps its own entries under a control character).
     */
    public static String problem(String tag) {
        if (tag == null || tag.isEmpty()) {
            return "a tag is 1-" + MAX_LENGTH + " characters, this one is empty";
        }
        if (tag.length() > MAX_LENGTH) {
            return "a tag is 1-" + MAX_LENGTH + " characters, this one has " + tag.length();
        }
        for (int i = 0; i < tag.length(); i++) {
            if (Character.isISOControl(tag.charAt(i))) {
                return "a tag has no control characters, this one has U+" + String.format("%04X", (int) tag.charAt(i))
                        + " at index " + i;
            }
        }
        return null;
    }

    /** The tag a record key names; throws {@link BadRecordException} for no, non-UTF-8 or invalid tags. */
    public static String fromKey(byte[] key) {
        if (key == null || key.length == 0) {
            throw new BadRecordException(Code.NO_TAG, "the record has no key, and sequence.tag-source=key");
        }
        String tag;
        try {
            tag = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(key)).toString();
        } catch (CharacterCodingException e) {
            throw new BadRecordException(Code.INVALID_TAG, "the record key is not UTF-8 text");
        }
        return checked(tag);
    }

    /** {@code tag} when valid; else a {@link BadRecordException} with code invalid-tag. */
    public static String checked(String tag) {
        String problem = problem(tag);
        if (problem != null) {
            throw new BadRecordException(Code.INVALID_TAG, problem);
        }
        return tag;
    }

    /**
     * The partition of the repartition topic, and so of the output topic, that holds {@code tag}:
     * Kafka's default partitioner on the UTF-8 bytes of the tag (murmur2), which is what the
     * repartition step uses for the tag key.
     */
    public static int partition(String tag, int partitions) {
        return partition(tag.getBytes(StandardCharsets.UTF_8), partitions);
    }

    /** {@link #partition(String, int)} of the tag's UTF-8 bytes. */
    public static int partition(byte[] tag, int partitions) {
        return Utils.toPositive(Utils.murmur2(tag)) % partitions;
    }
}
