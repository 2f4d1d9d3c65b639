package io.snowstamp.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One PostgreSQL server ({@link Postgres}) for every integration test class of the JVM that takes a
 * {@code Postgres} parameter where this extension is registered, as {@link SharedBroker} does for the
 * broker: started on first use, stopped once after the last test of the run (the root context's store
 * closes it). Tests keep apart by schema ({@link Postgres#createSchema}).
 */
public final class SharedPostgres implements ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SharedPostgres.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == Postgres.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(Postgres.class, key -> start(), Postgres.class);
    }

    private static Postgres start() {
        try {
            return Postgres.start();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("the shared PostgreSQL server did not start", e);
        }
    }
}
