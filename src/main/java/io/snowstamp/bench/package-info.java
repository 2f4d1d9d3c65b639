/**
 * The {@code bench} command's engine: the stamper against a pass-through topology on the same
 * settings, in one run, with throughput, CPU per record and latency; and {@link io.snowstamp.bench.Footprint},
 * what one stamper instance costs at a given partition count. May use runtime, stream,
 * resume, state, config and id.
 */
package io.snowstamp.bench;
