package io.snowstamp;

import io.snowstamp.testing.DocumentedAvroConsumer;
import io.snowstamp.testing.DocumentedConsumer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recipes of {@code consuming.md} are the code the integration tests run against PostgreSQL:
 * every code block that follows a {@code <!-- from: NAME -->} line is the text of NAME (below), and
 * this test fails when it is not; {@code -Dsnowstamp.docs.write=true} rewrites the blocks:
 * {@code mvn -B -q test -Dtest=ConsumingDocsTest -Dsnowstamp.docs.write=true}.
 */
class ConsumingDocsTest {
    static final Path PAGE = Path.of("src/site/markdown/consuming.md");
    private static final Path CONSUMER = Path.of("src/test/java/io/snowstamp/testing/DocumentedConsumer.java");
    private static final Path AVRO_CONSUMER = Path.of("src/test/java/io/snowstamp/testing/DocumentedAvroConsumer.java");
    private static final Path CONNECT = Path.of("src/test/resources/connect");
    private static final Pattern BLOCK = Pattern.compile("(<!-- from: ([^ ]+) -->\n```[a-z]*\n)(.*?)(```\n)", Pattern.DOTALL);

    /** What each block of the page is made from, by the name its marker gives. */
    static Map<String, String> sources() throws IOException {
        Map<String, String> sources = new LinkedHashMap<>();
        sources.put("DocumentedConsumer.TABLE", DocumentedConsumer.TABLE);
        sources.put("DocumentedConsumer.java", region(Files.readString(CONSUMER, StandardCharsets.UTF_8)));
        sources.put("DocumentedAvroConsumer.TABLE", DocumentedAvroConsumer.TABLE);
        sources.put("DocumentedAvroConsumer.java", region(Files.readString(AVRO_CONSUMER, StandardCharsets.UTF_8)));
        for (String file : List.of("events-to-postgres.properties", "orders-to-postgres.properties", "orders.sql",
                "avro-orders-to-postgres.properties", "avro-orders.sql")) {
            sources.put("connect/" + file, Files.readString(CONNECT.resolve(file), StandardCharsets.UTF_8));
        }
        return sources;
    }

    @Test
    void shouldShowTheCodeTheTestsRun() throws IOException {
        String page = Files.readString(PAGE, StandardCharsets.UTF_8);
        Map<String, String> sources = sources();
        String expected = render(page, sources);
        if (Boolean.getBoolean("snowstamp.docs.write")) {
            Files.writeString(PAGE, expected, StandardCharsets.UTF_8);
            page = expected;
        }
        assertThat(page).as("%s: its code blocks come from the code the tests run; regenerate them with"
                + " 'mvn -B -q test -Dtest=ConsumingDocsTest -Dsnowstamp.docs.write=true'", PAGE).isEqualTo(expected);
        List<String> shown = new ArrayList<>();
        BLOCK.matcher(page).results().forEach(block -> shown.add(block.group(2)));
        assertThat(shown).as("every recipe's source appears on the page").containsExactlyInAnyOrderElementsOf(sources.keySet());
    }

    @Test
    void shouldCutTheDocumentedRegionOutOfTheSource() {
        String source = "class X {\n    // consuming.md: begin\n    void a() {\n        b();\n    }\n    // consuming.md: end\n}\n";
        assertThat(region(source)).isEqualTo("void a() {\n    b();\n}\n");
    }

    /** The page with every marked block replaced by its source; a marker naming no source fails. */
    private static String render(String page, Map<String, String> sources) {
        Matcher block = BLOCK.matcher(page);
        StringBuilder out = new StringBuilder();
        while (block.find()) {
            String text = sources.get(block.group(2));
            assertThat(text).as("%s: no source named %s", PAGE, block.group(2)).isNotNull();
            block.appendReplacement(out, Matcher.quoteReplacement(block.group(1) + text + block.group(4)));
        }
        block.appendTail(out);
        return out.toString();
    }

    /** The lines between the {@code consuming.md: begin} and {@code end} comments, less their common indent. */
    static String region(String source) {
        List<String> lines = source.lines().toList();
        int begin = lines.indexOf(lines.stream().filter(l -> l.trim().equals("// consuming.md: begin")).findFirst().orElseThrow());
        int end = lines.indexOf(lines.stream().filter(l -> l.trim().equals("// consuming.md: end")).findFirst().orElseThrow());
        List<String> region = lines.subList(begin + 1, end);
        int indent = region.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        StringBuilder text = new StringBuilder();
        region.forEach(l -> text.append(l.isBlank() ? "" : l.substring(indent)).append('\n'));
        return text.toString();
    }
}
