package io.snowstamp.sequence;

import io.snowstamp.config.SequenceSettings;

/**
 * A tag as registered in the tags topic ({@code tags create}, {@code tags set-step}): where its
 * numbers start and how many a task reserves per state write. {@link TagDefinitionSerde} documents
 * the binary format.
 *
 * @param start     first number of the tag; numbers never go below it, and never back
 * @param step      numbers reserved per segment (per state write); a change applies from the next segment
 * @param revision  1 for {@code tags create}, + 1 per change; 0 for the defaults of an auto-created tag
 * @param updatedAt wall-clock Unix millis of the change (0 for defaults)
 */
public record TagDefinition(long start, long step, long revision, long updatedAt) {

    public TagDefinition {
        if (start < 0 || start > SequenceSettings.MAX_START) {
            throw new IllegalArgumentException("start " + start + " is outside 0.." + SequenceSettings.MAX_START);
        }
        if (step < 1 || step > SequenceSettings.MAX_STEP) {
            throw new IllegalArgumentException("step " + step + " is outside 1.." + SequenceSettings.MAX_STEP);
        }
        if (revision < 0) {
            throw new IllegalArgumentException("revision " + revision + " is negative");
        }
    }

    /** The definition an auto-created tag gets ({@code sequence.default-start}, {@code sequence.default-step}). */
    public static TagDefinition defaults(SequenceSettings settings) {
        return new TagDefinition(settings.defaultStart(), settings.defaultStep(), 0, 0);
    }

    /** The next revision with another step. */
    public TagDefinition withStep(long newStep, long now) {
        return new TagDefinition(start, newStep, revision + 1, now);
    }

    /** The one with the higher revision ({@code a} on a tie); either may be null. */
    public static TagDefinition newer(TagDefinition a, TagDefinition b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return b.revision > a.revision ? b : a;
    }
}
