/**
 * The live resume path of every task start: {@code ResumeDecision} (pure: the resume point from
 * state, reservation, output tail, registry mark and clock), {@code TailProbe} and its Kafka
 * implementation {@code TailGuard} over {@code PartitionTail} (read_uncommitted tail of an output
 * partition). May use state, config and id.
 */
package io.snowstamp.resume;
