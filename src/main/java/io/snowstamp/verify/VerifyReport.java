package io.snowstamp.verify;

import java.util.List;
import java.util.Objects;

/**
 * What {@link Verifier#finish()} found in a stamped topic.
 *
 * @param records       output records seen
 * @param duplicates    output records whose ID an earlier record already had, across all partitions
 *                      (an ID seen k times counts k - 1)
 * @param missing       source records that no output record's provenance points at (0 without a source)
 * @param extra         output records beyond one per source record: a second, third... stamping of
 *                      the same source record, and records whose provenance is missing, unparsable,
 *                      names another topic, or points at an offset the source does not have
 *                      (0 without a source)
 * @param decreases     output records whose ID is not above the ID of the stamped record before it
 *                      in the same partition
 * @param unstamped     output records with no or an unparsable {@code snowstamp-id} header
 * @param sourceRecords source records seen (0 without a source)
 * @param problems      up to {@link Verifier#MAX_PROBLEMS} human-readable examples, every kind of problem
 *                      found represented; never null, unmodifiable
 */
public record VerifyReport(long records, long duplicates, long missing, long extra,
                           long decreases, long unstamped, long sourceRecords,
                           List<String> problems) {

    public VerifyReport {
        if (records < 0 || duplicates < 0 || missing < 0 || extra < 0
                || decreases < 0 || unstamped < 0 || sourceRecords < 0) {
            throw new IllegalArgumentException("negative count in records=" + records
                    + " duplicates=" + duplicates + " missing=" + missing + " extra=" + extra
                    + " decreases=" + decreases + " unstamped=" + unstamped
                    + " sourceRecords=" + sourceRecords);
        }
        problems = List.copyOf(Objects.requireNonNull(problems, "problems"));
    }

    /** True when the topic has no duplicate, missing, extra, decreasing or unstamped record. */
    public boolean clean() {
        return duplicates == 0 && missing == 0 && extra == 0 && decreases == 0 && unstamped == 0;
    }

    /**
     * The last line the {@code verify} command prints, exactly
     * {@code records=N duplicates=D missing=M extra=E}.
     */
    public String summaryLine() {
        return "records=" + records + " duplicates=" + duplicates
                + " missing=" + missing + " extra=" + extra;
    }
}
