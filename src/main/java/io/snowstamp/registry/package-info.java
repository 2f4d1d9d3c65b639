/**
 * The worker registry: claims of worker ranges per ID space in a compacted single-partition
 * topic, the earliest-claim-wins verdict ({@code RegistryView}, pure), release marks for safe
 * recycling. Read at start and by heartbeats, never per record. May use recovery, resume, state,
 * config and id.
 */
package io.snowstamp.registry;
