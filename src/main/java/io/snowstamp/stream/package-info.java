/**
 * The stamping topology of snowflake mode: {@code StampTopology} (a pure factory), {@code StampProcessor}
 * (lease, reservation, stamping), the lead policy, the JSON splice, the dead-letter handler, the
 * freeze test hook and the pre-commit store. May use recovery, resume, lease, state, config and id.
 */
package io.snowstamp.stream;
