package io.snowstamp.bench;

/**
 * One measured run.
 *
 * @param seconds          from RUNNING until every input record was committed
 * @param recordsPerSecond steady rate: output records per second while the output grew from 10% to 90% of the input
 * @param ratio            records/s relative to the baseline run of the same repetition
 * @param p50Millis        produce-to-read_committed latency percentiles (-1 when not measured)
 * @param peakHeapMiB      highest heap in use in this JVM during the run (broker included when embedded)
 */
public record BenchResult(String name, long records, double seconds, double recordsPerSecond, double ratio,
                          double p50Millis, double p99Millis, long peakHeapMiB) {
}
