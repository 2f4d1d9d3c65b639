/**
 * Validated, typed settings: keys with defaults and help ({@code Keys}), the loader that records
 * where each value came from, and the checks that stop a configuration that cannot work before
 * anything starts. {@code SnowstampConfig} is a record of slices (connection, topics, ids, stamp,
 * recovery, admin, sequence, registry), each validating its own keys, so that a component takes
 * only the slice it uses. May use only id; every layer above id may read it.
 */
package io.snowstamp.config;
