package io.snowstamp.registry;

import io.snowstamp.SnowstampException;

/** The registry refuses a claim (overlap, other layout, disagreeing configuration): one line that says why and what to do. */
public class ClaimRefusedException extends SnowstampException {
    public ClaimRefusedException(String message) {
        super(message);
    }
}
