/**
 * Runs the stamper: Kafka client properties, the topic and Kafka checks before start, the worker
 * claim, topology assembly, Kafka Streams' lifecycle (start, await, rethrow, clean stop). May use
 * sequence, stream, registry, verify, recovery, resume, state, config and id.
 */
package io.snowstamp.runtime;
