/**
 * What is persisted and put on the wire: {@code WorkerState} and its versioned serde, the store
 * and changelog names, {@code StoreLayer} (a layer of snowstamp's over a Kafka Streams store), and
 * {@code IdHeader} (the header names and the one codec of {@code snowstamp-id}). Uses no other snowstamp package.
 */
package io.snowstamp.state;
