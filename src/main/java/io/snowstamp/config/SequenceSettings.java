package io.snowstamp.config;

import java.time.Duration;
import java.util.Objects;

/**
 * The {@code sequence.*} keys: how {@code id.mode=sequence} finds a record's tag and numbers it.
 *
 * @param tagField           top-level JSON field holding the tag, or null when the tag is the record key
 * @param autoCreate         whether a record with an unregistered tag creates the tag (with the defaults)
 *                           instead of going to the dead-letter topic
 * @param defaultStart       first number of an auto-created tag (and of {@code tags create} without --start)
 * @param defaultStep        numbers reserved per state write for an auto-created tag
 * @param tagsTopic          compacted topic of tag definitions, read as a global table
 * @param checkpointInterval how often a task records the output offset its state covers
 */
public record SequenceSettings(String tagField, boolean autoCreate, long defaultStart, long defaultStep,
                               String tagsTopic, Duration checkpointInterval) {
    /** Largest first number of a tag: leaves room for at least 2^62 numbers. */
    public static final long MAX_START = 1L << 62;
    /** Largest step: a billion numbers per state write. */
    public static final long MAX_STEP = 1_000_000_000L;
    /** Prefix of {@code sequence.tag-source} naming a JSON field. */
    public static final String FIELD_PREFIX = "field:";

    public SequenceSettings {
        Objects.requireNonNull(tagsTopic, "tagsTopic");
        Objects.requireNonNull(checkpointInterval, "checkpointInterval");
    }

    /** The settings as {@code sequence.tag-source} spells them. */
    public String tagSource() {
        return tagField == null ? "key" : FIELD_PREFIX + tagField;
    }

    static SequenceSettings from(Values v) {
        String source = v.string(Keys.SEQUENCE_TAG_SOURCE);
        String field;
        if (source.equalsIgnoreCase("key")) {
            field = null;
        } else if (source.startsWith(FIELD_PREFIX) && source.length() > FIELD_PREFIX.length()
                && source.length() <= FIELD_PREFIX.length() + 200) {
            field = source.substring(FIELD_PREFIX.length());
        } else {
            throw new ConfigException(Keys.SEQUENCE_TAG_SOURCE, source, "key, or field:NAME with a JSON field name of 1-200 characters");
        }
        return new SequenceSettings(field,
                v.bool(Keys.SEQUENCE_AUTO_CREATE),
                v.longInRange(Keys.SEQUENCE_DEFAULT_START, 0, MAX_START),
                v.longInRange(Keys.SEQUENCE_DEFAULT_STEP, 1, MAX_STEP),
                v.topic(Keys.SEQUENCE_TAGS_TOPIC),
                v.duration(Keys.SEQUENCE_CHECKPOINT_INTERVAL, Duration.ofMillis(100), Duration.ofHours(1)));
    }
}
