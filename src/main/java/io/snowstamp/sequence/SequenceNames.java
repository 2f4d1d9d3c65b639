package io.snowstamp.sequence;

import io.snowstamp.state.IdHeader;

/** Names of the sequence topology's stores and internal topics; its tag header is {@link IdHeader#TAG}. */
public final class SequenceNames {
    /** The per-task store of tag segments and the partition checkpoint. */
    public static final String STORE = "sequence-segments";
    /** The global store over the tags topic. */
    public static final String TAGS_STORE = "sequence-tags";
    /** Name of the repartition step; the topic is {@code <application.id>-sequence-by-tag-repartition}. */
    public static final String REPARTITION = "sequence-by-tag";

    static final String SOURCE = "sequence-input";
    static final String ROUTER = "sequence-route";
    static final String NUMBERER = "sequence-number";
    static final String SINK = "sequence-output";
    static final String TAGS_SOURCE = "sequence-tags-source";
    static final String TAGS_UPDATER = "sequence-tags-update";

    private SequenceNames() {
    }

    /** The changelog of the segments store: replay it for the reserved {@code max_id} of every tag. */
    public static String changelogTopic(String applicationId) {
        return applicationId + "-" + STORE + "-changelog";
    }

    /** The repartition topic that brings all records of a tag to one task. */
    public static String repartitionTopic(String applicationId) {
        return applicationId + "-" + REPARTITION + "-repartition";
    }
}
