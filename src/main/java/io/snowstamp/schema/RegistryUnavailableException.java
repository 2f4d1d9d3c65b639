package io.snowstamp.schema;

import io.snowstamp.SnowstampException;

/**
 * The schema registry did not answer (connection refused, timeout, HTTP 5xx, 408, 429): not a fault of
 * the record. The stamper waits and asks again; it neither dead-letters nor stamps on a guess.
 */
public final class RegistryUnavailableException extends SnowstampException {
    public RegistryUnavailableException(String message) {
        super(message);
    }
}
