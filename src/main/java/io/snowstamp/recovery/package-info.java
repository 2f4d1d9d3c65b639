/**
 * The offline tools of the CLI: reading and writing the worker-state changelog, import plans,
 * resume plans for {@code recover}, scans of output topics, the application's consumer group. The
 * live path never calls them. May use resume, state and id.
 */
package io.snowstamp.recovery;
