package io.snowstamp.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The samples of a Prometheus text exposition (format 0.0.4), enough to check names, labels and values. */
public final class PrometheusText {
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)(?:\\s+\\d+)?$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private PrometheusText() {
    }

    public static List<Sample> parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line.trim());
            if (!m.matches()) {
                throw new AssertionError("not a Prometheus sample line: " + line);
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            String value = m.group(3);
            samples.add(new Sample(m.group(1), labels,
                    value.equals("+Inf") ? Double.POSITIVE_INFINITY : value.equals("-Inf") ? Double.NEGATIVE_INFINITY
                            : Double.parseDouble(value)));
        }
        return samples;
    }

    /** The samples named {@code name}. */
    public static List<Sample> named(List<Sample> samples, String name) {
        return samples.stream().filter(s -> s.name().equals(name)).toList();
    }

    /** The sum of the samples named {@code name}. */
    public static double sum(List<Sample> samples, String name) {
        return named(samples, name).stream().mapToDouble(Sample::value).sum();
    }
}
