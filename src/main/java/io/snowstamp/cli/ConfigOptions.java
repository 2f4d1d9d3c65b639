package io.snowstamp.cli;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.Keys;
import io.snowstamp.config.LayoutLifetime;
import io.snowstamp.config.SnowstampConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** Where configuration comes from: defaults < file < SNOWSTAMP_* environment < flags < --set. */
final class ConfigOptions {
    private static final Logger log = LoggerFactory.getLogger(ConfigOptions.class);

    /**
     * The option that sets each key, for error messages ("from --application-id"). One table, because
     * every command spells the option for a key the same way.
     */
    private static final Map<String, String> OPTION_OF_KEY = Map.of(
            Keys.BOOTSTRAP_SERVERS, "--bootstrap-servers",
            Keys.APPLICATION_ID, "--application-id",
            Keys.STATE_DIR, "--state-dir",
            Keys.INSTANCE_ID, "--instance-id",
            Keys.ADMIN_PORT, "--admin-port",
            Keys.ADMIN_BIND, "--admin-bind",
            Keys.PROFILE, "--profile");

    @Option(names = "--config", paramLabel = "FILE",
            description = "properties file (default: snowstamp.properties in the working directory, if present)")
    Path configFile;

    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "any configuration key (see the README); "
            + "repeatable; wins over the file and SNOWSTAMP_* environment variables (default: none)")
    Map<String, String> settings = new LinkedHashMap<>();

    /** The last configuration loaded, with where each value came from. */
    private ConfigLoader.Loaded loaded;

    /** Loads the configuration; {@code flags} are command-specific keys, applied before --set. */
    SnowstampConfig load(Map<String, String> flags) {
        Map<String, String> overrides = new LinkedHashMap<>(flags);
        Map<String, String> sources = new LinkedHashMap<>();
        flags.keySet().forEach(key -> sources.put(key, OPTION_OF_KEY.getOrDefault(key, "the command line")));
        overrides.putAll(settings);
        settings.keySet().forEach(key -> sources.put(key, "--set"));
        loaded = ConfigLoader.read(configFile, System.getenv(), overrides, sources);
        return loaded.config();
    }

    /**
     * For the commands that issue IDs, after {@link #load}: refuses a layout that cannot issue an ID
     * now and logs a warning when it runs out within {@code id.lifetime-warning}.
     */
    void requireIssuableLayout() {
        LayoutLifetime.check(loaded, System.currentTimeMillis()).ifPresent(warning -> log.warn(warning));
    }
}
