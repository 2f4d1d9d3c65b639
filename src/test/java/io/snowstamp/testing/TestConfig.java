package io.snowstamp.testing;

import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;

import java.util.HashMap;
import java.util.Map;

/**
 * The one way tests build a {@link SnowstampConfig}: {@link Keys#defaults()}, then a test class's base
 * pairs, then the pairs of one test (later pairs win). Goes through {@link SnowstampConfig#from}, so the
 * same validation as in production applies.
 * <pre>
 * private static final TestConfig BASE = TestConfig.base(Keys.INSTANCE_ID, "t");
 * SnowstampConfig config = BASE.with("id.preset", "js-safe");
 * </pre>
 */
public final class TestConfig {
    private final Map<String, String> base;

    private TestConfig(Map<String, String> base) {
        this.base = base;
    }

    /** The defaults plus {@code pairs} (key, value, key, value, ...). */
    public static SnowstampConfig of(String... pairs) {
        return base().with(pairs);
    }

    /** A starting point: the defaults plus {@code pairs} (key, value, key, value, ...), for {@link #with}. */
    public static TestConfig base(String... pairs) {
        return new TestConfig(put(new HashMap<>(Keys.defaults()), pairs));
    }

    /** This base plus {@code pairs}, validated. */
    public SnowstampConfig with(String... pairs) {
        return SnowstampConfig.from(put(new HashMap<>(base), pairs));
    }

    private static Map<String, String> put(Map<String, String> raw, String... pairs) {
        if (pairs.length % 2 != 0) {
            throw new IllegalArgumentException("pairs must be key, value, ...: got " + pairs.length + " strings");
        }
        for (int i = 0; i < pairs.length; i += 2) {
            raw.put(pairs[i], pairs[i + 1]);
        }
        return raw;
    }
}
