package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Writing worker state was refused because it could let an ID be issued twice; nothing was written.
 * {@link LowerMark} and {@link LayoutMismatch} carry the values that decided.
 */
public class ImportRefusedException extends SnowstampException {
    public ImportRefusedException(String message) {
        super(message);
    }

    /** One partition whose high-water mark would go down: from {@code current} to {@code proposed}. */
    public record Lowering(int partition, long current, String currentTime, long proposed, String proposedTime) {
        @Override
        public String toString() {
            return "partition " + partition + " from " + current + " (" + currentTime + ") to "
                    + (proposed < 0 ? "none" : proposed + " (" + proposedTime + ")");
        }
    }

    /** The state to write has a lower high-water mark than the changelog holds now. */
    public static final class LowerMark extends ImportRefusedException {
        private final List<Lowering> lowerings;

        public LowerMark(String topic, List<Lowering> lowerings) {
            super("refusing to lower the high-water mark (max of lastId and reservedUntil) of "
                    + lowerings.stream().map(Lowering::toString).collect(Collectors.joining(", "))
                    + ": " + topic + " already holds the higher mark, so IDs up to it may have been issued;"
                    + " import a newer export, or use 'recover' to seed from the changelog and the output topic");
            this.lowerings = List.copyOf(lowerings);
        }

        public List<Lowering> lowerings() {
            return lowerings;
        }
    }

    /** The state was written with another ID layout than the one configured. */
    public static final class LayoutMismatch extends ImportRefusedException {
        private final String found;
        private final String configured;

        /** @param what where {@code found} comes from, e.g. "the file" or "partition 2 of the changelog" */
        public LayoutMismatch(String what, String found, String configured) {
            super(what + " has ID layout " + found + " but the configured layout is " + configured
                    + ": marks of another layout say nothing about the IDs this one issues"
                    + " (set the id.* keys the state was written with, e.g. --set id.preset=...)");
            this.found = found;
            this.configured = configured;
        }

        public String found() {
            return found;
        }

        public String configured() {
            return configured;
        }
    }
}
