/**
 * Sequence mode ({@code id.mode=sequence}): dense numbers per tag, its own topology, router,
 * numbering processor, segment state and tag registry. Builds on pieces of stream (JSON splice,
 * stamped values) and the ownership lease; may use every package below it.
 */
package io.snowstamp.sequence;
