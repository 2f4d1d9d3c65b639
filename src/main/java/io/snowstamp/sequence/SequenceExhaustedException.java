package io.snowstamp.sequence;

import io.snowstamp.SnowstampException;

/** A tag has issued every number up to {@link Long#MAX_VALUE}: there is no next number that was not issued. */
public final class SequenceExhaustedException extends SnowstampException {
    private final String tag;

    public SequenceExhaustedException(String tag) {
        super("tag '" + tag + "' has reserved every number up to " + Long.MAX_VALUE + "; no unissued number is left");
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }
}
