package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * One topic as declared in {@code topics/NAME.properties}: {@code partitions},
 * {@code replication.factor} ({@code auto}, the default: {@link io.snowstamp.recovery.Replication},
 * chosen from the cluster's brokers; -1: the broker's {@code default.replication.factor}; or a
 * number) and any other key as a topic config.
 *
 * @param replicationFactor {@link #AUTO}, {@link #BROKER_DEFAULT} or 1..32
 */
public record TopicSpec(String name, int partitions, short replicationFactor, Map<String, String> configs) {
    /** {@code replication.factor=auto}: min(3, brokers), with min.insync.replicas to match. */
    public static final short AUTO = 0;
    /** {@code replication.factor=-1}: whatever the broker's default.replication.factor says. */
    public static final short BROKER_DEFAULT = -1;
    private static final String AUTO_TEXT = "auto";

    /** Topic files shipped inside the jar, used when there is no {@code topics/} directory. */
    static final List<String> BUNDLED = List.of("events.raw", "events.stamped", "events.dlq", "snowstamp-tags", "snowstamp-workers");

    public TopicSpec {
        configs = Map.copyOf(configs);
    }

    /** Every {@code *.properties} file of {@code dir}, or the bundled defaults when {@code dir} does not exist. */
    public static List<TopicSpec> load(Path dir) {
        List<TopicSpec> specs = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.properties")) {
                for (Path file : files) {
                    String name = file.getFileName().toString().replaceFirst("\\.properties$", "");
                    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                        specs.add(parse(name, reader, file.toString()));
                    }
                }
            } catch (IOException e) {
                throw new SnowstampException("cannot read topic files in " + dir + ": " + e.getMessage(), e);
            }
        } else {
            for (String name : BUNDLED) {
                try (InputStream in = TopicSpec.class.getResourceAsStream("/topics/" + name + ".properties")) {
                    if (in == null) {
                        throw new SnowstampException("bundled topic file topics/" + name + ".properties is missing from the jar");
                    }
                    specs.add(parse(name, new java.io.InputStreamReader(in, StandardCharsets.UTF_8), "bundled " + name));
                } catch (IOException e) {
                    throw new SnowstampException("cannot read bundled topic file " + name + ": " + e.getMessage(), e);
                }
            }
        }
        specs.sort(java.util.Comparator.comparing(TopicSpec::name));
        return specs;
    }

    /** The spec named {@code topic} in the list, or a copy of {@code template}'s settings under that name. */
    public static TopicSpec named(List<TopicSpec> specs, String topic, String template) {
        for (TopicSpec spec : specs) {
            if (spec.name().equals(topic)) {
                return spec;
            }
        }
        for (TopicSpec spec : specs) {
            if (spec.name().equals(template)) {
                return new TopicSpec(topic, spec.partitions(), spec.replicationFactor(), spec.configs());
            }
        }
        return new TopicSpec(topic, 1, AUTO, Map.of());
    }

    static TopicSpec parse(String name, Reader reader, String source) throws IOException {
        Properties props = new Properties();
        props.load(reader);
        Map<String, String> configs = new TreeMap<>();
        props.stringPropertyNames().forEach(key -> configs.put(key, props.getProperty(key).trim()));
        int partitions = number(configs.remove("partitions"), "partitions", source, 1, 100_000);
        String factor = configs.getOrDefault("replication.factor", AUTO_TEXT);
        configs.remove("replication.factor");
        int replication = factor.equalsIgnoreCase(AUTO_TEXT) ? AUTO : wholeNumber(factor, -1, 32);
        if (replication == AUTO && !factor.equalsIgnoreCase(AUTO_TEXT) || replication == Integer.MIN_VALUE) {
            throw new SnowstampException(source + ": replication.factor=" + factor + " is invalid: accepted auto (the default:"
                    + " min(3, brokers)), -1 (the broker's default.replication.factor) or 1..32");
        }
        return new TopicSpec(name, partitions, (short) replication, configs);
    }

    private static int number(String value, String key, String source, int min, int max) {
        if (value == null) {
            throw new SnowstampException(source + ": " + key + " is missing: accepted a whole number " + min + ".." + max);
        }
        int parsed = wholeNumber(value, min, max);
        if (parsed == Integer.MIN_VALUE) {
            throw new SnowstampException(source + ": " + key + "=" + value + " is invalid: accepted a whole number " + min + ".." + max);
        }
        return parsed;
    }

    /** The number, or {@link Integer#MIN_VALUE} when {@code value} is not a whole number in {@code min..max}. */
    private static int wholeNumber(String value, int min, int max) {
        try {
            int parsed = Integer.parseInt(value);
            return parsed >= min && parsed <= max ? parsed : Integer.MIN_VALUE;
        } catch (NumberFormatException e) {
            return Integer.MIN_VALUE;
        }
    }
}
