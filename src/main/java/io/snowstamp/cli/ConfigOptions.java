package io.snowstamp.cli;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** Where configuration comes from: defaults < file < SNOWSTAMP_* environment < flags < --set. */
final class ConfigOptions {
    @Option(names = "--config", paramLabel = "FILE",
            description = "properties file (default: snowstamp.properties in the working directory, if present)")
    Path configFile;

    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "any configuration key (see the README); "
            + "repeatable; wins over the file and SNOWSTAMP_* environment variables")
    Map<String, String> settings = new LinkedHashMap<>();

    /** Loads the configuration; {@code flags} are command-specific keys, applied before --set. */
    SnowstampConfig load(Map<String, String> flags) {
        Map<String, String> overrides = new LinkedHashMap<>(flags);
        overrides.putAll(settings);
        return ConfigLoader.load(configFile, System.getenv(), overrides);
    }
}
