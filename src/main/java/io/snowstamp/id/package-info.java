/**
 * The pure ID core: layouts ({@code IdLayout}: encode, decode, fingerprint) and the generator
 * ({@code IdGenerator}: a logical clock with an injected time source). Plain Java: no Kafka import
 * and no other snowstamp package, so it can be reasoned about and tested alone.
 */
package io.snowstamp.id;
