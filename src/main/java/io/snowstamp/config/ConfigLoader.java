package io.snowstamp.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Merges the configuration sources, lowest first: defaults, {@code snowstamp.properties} in the
 * working directory (or the file given with {@code --config}), {@code SNOWSTAMP_*} environment
 * variables, then command-line flags and {@code --set KEY=VALUE}. Unknown keys are refused from
 * every source, so a typo stops startup instead of being silently ignored.
 */
public final class ConfigLoader {
    public static final String DEFAULT_FILE = "snowstamp.properties";
    /** Environment variables read by the logging setup (logback.xml), not configuration keys. */
    static final String LOGGING_PREFIX = "SNOWSTAMP_LOG_";

    private final Map<String, String> values = new LinkedHashMap<>();

    private ConfigLoader() {
    }

    /**
     * @param configFile  {@code --config} value, or null to read {@code snowstamp.properties} if it exists
     * @param environment usually {@code System.getenv()}
     * @param overrides   command-line flags and {@code --set} pairs, applied last
     */
    public static SnowstampConfig load(Path configFile, Map<String, String> environment, Map<String, String> overrides) {
        ConfigLoader loader = new ConfigLoader();
        loader.values.putAll(Keys.DEFAULTS);
        loader.readFile(configFile);
        loader.readEnvironment(environment);
        overrides.forEach((key, value) -> loader.put(key, value, "command line"));
        return SnowstampConfig.from(loader.values);
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
        } catch (IOException | IllegalArgumentException e) {
            throw new ConfigException("--config=" + file + " is invalid: cannot read it (" + e.getMessage() + ")");
        }
        properties.stringPropertyNames().stream().sorted()
                .forEach(key -> put(key, properties.getProperty(key).trim(), file.toString()));
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
                    put(key, e.getValue(), "environment");
                });
    }

    private void put(String key, String value, String source) {
        if (!Keys.isKnown(key)) {
            throw new ConfigException("unknown configuration key '" + key + "' (from " + source
                    + "): accepted " + String.join(", ", Keys.DEFAULTS.keySet()) + " and kafka.*");
        }
        values.put(key, value);
    }
}
