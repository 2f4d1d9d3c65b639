/**
 * The real Apache Kafka broker (KRaft, single node) in-process, for {@code demo}, {@code broker}
 * and runs without {@code --bootstrap-servers}; its log goes to a file in its data directory.
 * Uses no other snowstamp package.
 */
package io.snowstamp.embedded;
