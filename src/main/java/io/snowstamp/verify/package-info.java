/**
 * The checks behind {@code verify}: duplicate IDs, per-partition order, missing and extra records
 * against a source, per-tag sequences, IDs shared between topics. May use state and id.
 */
package io.snowstamp.verify;
