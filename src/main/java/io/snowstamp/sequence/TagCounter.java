package io.snowstamp.sequence;

import io.snowstamp.sequence.SequenceState.TagSegment;

/**
 * The numbers one tag may issue without another write: {@code last + 1 .. end}. One per tag a task has seen since it
 * started, on its stream thread ({@link SequenceProcessor}).
 */
final class TagCounter {
    /** the last number issued, or the one to resume after */
    long last;
    /** the end of the reserved segment (inclusive); {@code last == end}: reserve before issuing */
    long end;
    /** the tag's entry as last written or restored (null: none yet); {@code last > written.issued()}: advanced since */
    TagSegment written;
    /** numbers up to this may leave the task: a segment reaching it is in the changelog (acknowledged or restored) */
    long acked = -1;

    /**
     * A counter for a tag first seen since the task started: where {@code resumeInside}, right after the last number
     * issued (which the tail scan made the stored {@code issued}), inside the reserved segment; otherwise above the
     * stored {@code maxId} (the first record reserves a new segment). A stored segment is in the changelog: its numbers
     * may leave the task.
     *
     * @param stored the tag's stored entry (null: none)
     */
    static TagCounter open(TagSegment stored, boolean resumeInside) {
        TagCounter counter = new TagCounter();
        counter.written = stored;
        counter.end = stored == null ? -1 : stored.maxId();
        counter.last = stored == null ? -1 : resumeInside ? stored.issued() : stored.maxId();
        if (stored != null) {
            counter.acked = stored.maxId();
        }
        return counter;
    }

    /** Whether the tag issued numbers since its entry was last written. */
    boolean advanced() {
        return written != null && last > written.issued();
    }
}
