/**
 * The admin HTTP server of {@code run}: {@code /health}, {@code /metrics} (Prometheus text) and
 * {@code /state} (tasks, leases, stalls, the worker range). Reads what the runtime and the tasks
 * publish; may use runtime, stream, resume, state, config and id.
 */
package io.snowstamp.admin;
