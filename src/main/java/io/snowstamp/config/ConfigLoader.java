package io.snowstamp.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Merges the configuration sources, lowest first: defaults, {@code snowstamp.properties} in the
 * working directory (or the file given with {@code --config}), {@code SNOWSTAMP_*} environment
 * variables, then command-line flags and {@code --set KEY=VALUE}. Unknown keys are refused from
 * every source, so a typo stops startup instead of being silently ignored. An invalid value is
 * reported with where it came from: the file, the environment variable, the option or the default.
 */
public final class ConfigLoader {
    public static final String DEFAULT_FILE = "snowstamp.properties";
    /** Environment variables read by the logging setup (logback.xml), not configuration keys. */
    static final String LOGGING_PREFIX = "SNOWSTAMP_LOG_";
    static final String DEFAULT_SOURCE = "the default";

    private final Map<String, String> values = new LinkedHashMap<>();
    private final Map<String, String> sources = new LinkedHashMap<>();

    private ConfigLoader() {
    }

    /**
     * A validated configuration with the merged values it was built from and where each came from.
     *
     * @param values  every key's merged value (defaults included)
     * @param sources key -> where its value came from, e.g. {@code --set}, {@code environment variable SNOWSTAMP_ID_EPOCH}
     */
    public record Loaded(SnowstampConfig config, Map<String, String> values, Map<String, String> sources) {
        public Loaded {
            values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
            sources = Collections.unmodifiableMap(new LinkedHashMap<>(sources));
        }

        /** Where the value of {@code key} came from ({@code the default} when nobody set it). */
        public String sourceOf(String key) {
            return sources.getOrDefault(key, DEFAULT_SOURCE);
        }

        /** Whether {@code key} was set by a file, the environment or the command line. */
        public boolean isSet(String key) {
            return sources.containsKey(key);
        }
    }

    /**
     * @param configFile  {@code --config} value, or null to read {@code snowstamp.properties} if it exists
     * @param environment usually {@code System.getenv()}
     * @param overrides   command-line flags and {@code --set} pairs, applied last
     */
    public static SnowstampConfig load(Path configFile, Map<String, String> environment, Map<String, String> overrides) {
        return read(configFile, environment, overrides, Map.of()).config();
    }

    /**
     * Like {@link #load}, keeping the values and their sources.
     *
     * @param overrideSources key of {@code overrides} -> the option that set it ({@code --set} and
     *                        the like); keys not in it are reported as {@code the command line}
     */
    public static Loaded read(Path configFile, Map<String, String> environment, Map<String, String> overrides,
                              Map<String, String> overrideSources) {
        ConfigLoader loader = new ConfigLoader();
        loader.values.putAll(Keys.DEFAULTS);
        loader.readFile(configFile);
        loader.readEnvironment(environment);
        overrides.forEach((key, value) -> loader.put(key, value, overrideSources.getOrDefault(key, "the command line")));
        try {
            SnowstampConfig config = SnowstampConfig.from(loader.values);
            // not part of SnowstampConfig: only the commands that issue IDs use it (LayoutLifetime)
            new Values(loader.values).duration(Keys.ID_LIFETIME_WARNING, java.time.Duration.ZERO, java.time.Duration.ofDays(36_500));
            return new Loaded(config, loader.values, loader.sources);
        } catch (ConfigException e) {
            throw e.key() == null ? e : e.from(loader.sources.getOrDefault(e.key(), DEFAULT_SOURCE));
        }
    }

    private void readFile(Path configFile) {
        Path file = configFile != null ? configFile : Path.of(DEFAULT_FILE);
        if (!Files.exists(file)) {
            if (configFile != null) {
                throw new ConfigException("--config=" + configFile + " is invalid: the file does not exist");
            }
            return;
        }
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(reader);
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new ConfigException("--config=" + file + " is invalid: accepted a properties file in UTF-8 (this is not UTF-8 text)");
        } catch (IOException | IllegalArgumentException e) {
            throw new ConfigException("--config=" + file + " is invalid: cannot read it (" + e.getMessage() + ")");
        }
        properties.stringPropertyNames().stream().sorted()
                .forEach(key -> put(key, properties.getProperty(key).trim(), "file " + file));
    }

    private void readEnvironment(Map<String, String> environment) {
        environment.entrySet().stream()
                .filter(e -> e.getKey().startsWith("SNOWSTAMP_") && !e.getKey().startsWith(LOGGING_PREFIX))
                .sorted(Map.Entry.comparingByKey())
                .forEach(e -> {
                    String key = Keys.fromEnvironmentName(e.getKey());
                    if (key == null) {
                        throw new ConfigException("environment variable " + e.getKey()
                                + " names no configuration key: accepted SNOWSTAMP_ followed by a key in capitals"
                                + " with '.' and '-' as '_' (SNOWSTAMP_ID_WORKER_OFFSET, SNOWSTAMP_KAFKA_SASL_MECHANISM)");
                    }
                    put(key, e.getValue(), "environment variable " + e.getKey());
                });
    }

    private void put(String key, String value, String source) {
        if (!Keys.isKnown(key)) {
            throw new ConfigException("unknown configuration key '" + key + "' (from " + source
                    + "): accepted " + String.join(", ", Keys.DEFAULTS.keySet()) + " and kafka.*");
        }
        values.put(key, value);
        sources.put(key, source);
    }
}
