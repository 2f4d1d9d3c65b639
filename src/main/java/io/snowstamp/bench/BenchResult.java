package io.snowstamp.bench;

/**
 * One measured run.
 *
 * @param seconds          from RUNNING until every input record was committed
 * @param recordsPerSecond steady rate: output records per second while the output grew from 10% to 90% of the input
 * @param cpuMicros        CPU time of the bench JVM per record in the steady window (embedded broker included), -1 when not measured
 * @param brokerCpuMicros  CPU time of the broker's process per record in the same window ({@code bench --broker-pid}), -1 when not measured
 * @param p50Millis        produce-to-read_committed latency percentiles (-1 when not measured)
 * @param peakHeapMiB      highest heap in use in this JVM during the run (broker included when embedded)
 */
public record BenchResult(String name, long records, double seconds, double recordsPerSecond, double cpuMicros,
                          double brokerCpuMicros, double p50Millis, double p99Millis, long peakHeapMiB) {
}
