package io.snowstamp.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One in-process broker for every integration test class of the JVM that does not need a broker of
 * its own: such a class extends {@link OnSharedBroker} (or takes a {@code TestBroker} parameter where
 * this extension is registered). Starting a broker costs seconds; the suite used to start one per class.
 *
 * <p>The broker is started on first use with the embedded broker's own settings (those a user gets,
 * which the fault tests need too) and stopped once, after the last test of the run: it
 * lives in the root context's store, which JUnit closes at the end; test classes running side by side
 * get the same one (the store computes it once). Tests share it safely because
 * each uses topic, application and group names of its own ({@link TestBroker#unique}); a test that
 * stops, restarts or reconfigures the broker must start its own with {@link TestBroker#start}.
 */
public final class SharedBroker implements ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SharedBroker.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == TestBroker.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(TestBroker.class, key -> start(), TestBroker.class);
    }

    private static TestBroker start() {
        try {
            TestBroker broker = TestBroker.start();
            // the child JVMs of every test start faster once this archive exists (built in the background)
            ClassArchive.buildOnce(broker);
            return broker;
        } catch (Exception e) {
            throw new IllegalStateException("the shared test broker did not start", e);
        }
    }
}
