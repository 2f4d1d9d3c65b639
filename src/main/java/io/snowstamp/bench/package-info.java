/**
 * The {@code bench} command's engine: the stamper against a pass-through topology on the same
 * settings, in one run, with throughput, CPU per record and latency. May use runtime, stream,
 * resume, state, config and id.
 */
package io.snowstamp.bench;
