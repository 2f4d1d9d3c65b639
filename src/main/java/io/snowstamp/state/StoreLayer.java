package io.snowstamp.state;

import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.StoreBuilder;

import java.util.Map;
import java.util.function.UnaryOperator;

/** A store builder that builds another's store with a layer of snowstamp's on top; its configuration goes to the other. */
public final class StoreLayer {
    private StoreLayer() {
    }

    /** {@code builder}, its stores passed through {@code layer} when built. */
    public static <S extends StateStore> StoreBuilder<S> over(StoreBuilder<S> builder, UnaryOperator<S> layer) {
        return new StoreBuilder<>() {
            @Override
            public StoreBuilder<S> withCachingEnabled() {
                builder.withCachingEnabled();
                return this;
            }

            @Override
            public StoreBuilder<S> withCachingDisabled() {
                builder.withCachingDisabled();
                return this;
            }

            @Override
            public StoreBuilder<S> withLoggingEnabled(Map<String, String> config) {
                builder.withLoggingEnabled(config);
                return this;
            }

            @Override
            public StoreBuilder<S> withLoggingDisabled() {
                builder.withLoggingDisabled();
                return this;
            }

            @Override
            public S build() {
                return layer.apply(builder.build());
            }

            @Override
            public Map<String, String> logConfig() {
                return builder.logConfig();
            }

            @Override
            public boolean loggingEnabled() {
                return builder.loggingEnabled();
            }

            @Override
            public String name() {
                return builder.name();
            }
        };
    }
}
