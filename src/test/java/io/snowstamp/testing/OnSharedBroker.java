package io.snowstamp.testing;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Base of the integration tests that run on the JVM's shared broker ({@link SharedBroker}):
 * {@link #broker} is set before the first test of the class. A test that stops, restarts or
 * reconfigures a broker starts its own with {@link TestBroker#start} instead.
 */
@ExtendWith(SharedBroker.class)
public abstract class OnSharedBroker {
    /** The shared broker; the same one in every class, so test classes running side by side may set it at once. */
    protected static TestBroker broker;

    @BeforeAll
    static void useSharedBroker(TestBroker shared) {
        broker = shared;
    }
}
