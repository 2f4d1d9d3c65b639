package io.snowstamp.verify;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Ten million output records and ten million source records through one {@link Verifier}, inside
 * the 1 GiB heap surefire gives the tests ({@code -Xmx1g} in the POM): the memory bound is the
 * assertion that the verifier keeps no object per record. Uses the decoded-header overload so the
 * test itself creates no string per record.
 */
class VerifierTenMillionRecordsTest {

    private static final String OUT = "events.stamped";
    private static final String RAW = "events.raw";
    private static final int PARTITIONS = 8;
    private static final int SOURCE_PER_PARTITION = 1_250_000;
    /** Records each partition writes per turn, as a consumer's polls interleave partitions. */
    private static final int BATCH = 500;

    @Test
    void shouldCountExactlyOverTenMillionRecords() {
        Verifier verifier = new Verifier(OUT, RAW);
        StampedPartition[] partitions = new StampedPartition[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) {
            partitions[p] = new StampedPartition(p);
        }
        boolean more = true;
        while (more) {
            more = false;
            for (StampedPartition partition : partitions) {
                more |= partition.write(verifier, BATCH);
            }
        }
        for (long offset = 0; offset < SOURCE_PER_PARTITION; offset++) {
            for (int p = 0; p < PARTITIONS; p++) {
                verifier.source(p, offset);
            }
        }

        VerifyReport report = verifier.finish();

        System.out.printf("heap in use after finish, verifier still reachable: %d MB%n", usedHeapMegabytes());
        assertThat(report.summaryLine()).isEqualTo("records=10000000 duplicates=3 missing=2 extra=2");
        assertThat(report).isEqualTo(new VerifyReport(10_000_000, 3, 2, 2, 1, 1, 10_000_000, report.problems()));
        assertThat(report.problems()).containsExactly(
                "duplicate id 16005 at events.stamped-3@1000 and events.stamped-5@1000",
                "duplicate id 11199984 at events.stamped-0@699999 and @700000",
                "duplicate id 16000005 at events.stamped-3@1000000 and events.stamped-5@1000000",
                "missing: events.raw-6@100",
                "missing: events.raw-6@900000",
                "extra: events.raw-7@500 stamped 2 times (events.stamped-7@500, @501)",
                "extra: events.raw-2@1250010 is not in the source but stamped 1 time (events.stamped-2@1250000)",
                "decrease in partition 0 at offset 700000: 11199984 after 11199984",
                "unstamped: events.stamped-4@42 has no snowstamp-id header");
    }

    private static long usedHeapMegabytes() {
        Runtime runtime = Runtime.getRuntime();
        System.gc();
        return (runtime.totalMemory() - runtime.freeMemory()) >> 20;
    }

    /**
     * Stamps source partition p into output partition p with ID {@code offset * 16 + p}, strictly
     * increasing and unique, except for these faults:
     * <ul>
     *   <li>partition 3 at offsets 1000 and 1,000,000 carries partition 5's ID of the same offset
     *       (still increasing in partition 3): 2 duplicates across partitions;</li>
     *   <li>partition 0 at offset 700,000 repeats the ID before it: 1 duplicate, 1 decrease;</li>
     *   <li>partition 4 at offset 42 is unstamped;</li>
     *   <li>partition 6 never stamps source offsets 100 and 900,000: 2 missing;</li>
     *   <li>partition 7 stamps source offset 500 twice, and partition 2 ends with a record pointing
     *       past the source's end: 2 extra.</li>
     * </ul>
     * 8 x 1,250,000 - 2 + 1 + 1 = 10,000,000 output records.
     */
    private static final class StampedPartition {
        private final int partition;
        private long nextSource;
        private long nextOffset;
        private boolean tailWritten;

        StampedPartition(int partition) {
            this.partition = partition;
        }

        /** Writes up to {@code count} records; false once the partition is done. */
        boolean write(Verifier verifier, int count) {
            for (int n = 0; n < count; n++) {
                if (nextSource == SOURCE_PER_PARTITION) {
                    if (partition == 2 && !tailWritten) {
                        tailWritten = true;
                        stamp(verifier, SOURCE_PER_PARTITION + 10);
                    }
                    return false;
                }
                long source = nextSource++;
                if (partition == 6 && (source == 100 || source == 900_000)) {
                    continue;
                }
                stamp(verifier, source);
                if (partition == 7 && source == 500) {
                    stamp(verifier, source);
                }
            }
            return true;
        }

        private void stamp(Verifier verifier, long source) {
            long offset = nextOffset++;
            long id = offset * 16 + partition;
            if (partition == 3 && (offset == 1000 || offset == 1_000_000)) {
                id = offset * 16 + 5;
            } else if (partition == 0 && offset == 700_000) {
                id = (offset - 1) * 16;
            } else if (partition == 4 && offset == 42) {
                id = -1;
            }
            verifier.output(partition, offset, id, RAW, partition, source);
        }
    }
}
