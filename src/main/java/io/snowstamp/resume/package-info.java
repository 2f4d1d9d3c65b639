/**
 * The live resume path of every task start: {@code ResumeDecision} (pure: the resume point from
 * state, reservation, output tail, registry mark and clock), {@code TailProbe} and its Kafka
 * implementation {@code TailGuard} over {@code PartitionTail} (read_uncommitted tail of an output
 * partition; read_committed where {@code StampedInputs} finds what at-least-once already stamped), and {@code TailPrefetch} (the tails of many tasks starting together, fenced and read in
 * one go). May use state, config and id.
 */
package io.snowstamp.resume;
