package io.snowstamp.registry;

import io.snowstamp.SnowstampException;

/** A running application's claim is gone or taken: it must stop stamping (never stamp with an unclaimed worker). */
public class RegistryLostException extends SnowstampException {
    public RegistryLostException(String message) {
        super(message);
    }
}
