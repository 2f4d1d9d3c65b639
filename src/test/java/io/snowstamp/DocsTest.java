package io.snowstamp;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README is the front door: short, the two quick-start commands, and links that lead somewhere.
 * The pages behind it live in {@code src/site/markdown/}; the generated ones are checked by
 * {@link ReferenceDocsTest}.
 */
class DocsTest {
    private static final Path README = Path.of("README.md");
    private static final Path SITE = Path.of("src/site/markdown");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6} (.*)$");

    @Test
    void shouldGiveExactlyTheTwoQuickStartCommands() throws Exception {
        String quickStart = Files.readString(README).split("## Quick start")[1].split("\n## ")[0];
        assertThat(quickStart).contains("```sh\nmvn -q -B -DskipTests package && java -jar target/snowstamp.jar demo\nmvn -B verify\n```");
    }

    @Test
    void shouldRunTheFullTierInCiAndNameBothTiersInTheReadme() throws Exception {
        assertThat(Files.readString(Path.of(".ci/run"))).as("CI runs the README's full-tier command").containsPattern("(?m)^mvn -B verify -Pfull$");
        assertThat(Files.readString(README)).contains("* `mvn -B verify`: ", "* `mvn -B verify -Pfull`: ");
        assertThat(Files.readString(Path.of("pom.xml"))).as("the default tier leaves out the classes tagged full")
                .contains("<it.excludedGroups>full</it.excludedGroups>", "<id>full</id>");
    }

    @Test
    void shouldKeepTheReadmeAFrontDoor() throws Exception {
        assertThat(Files.readAllLines(README)).as("README.md lines: longer material belongs in src/site/markdown/").hasSizeLessThan(250);
    }

    /** A page longer than this says things twice or belongs split: link to where a thing is said instead. */
    static final int PAGE_LINES = 450;

    /**
     * Every hand-written page behind the README stays short. The generated references are left out: they are as long as
     * the commands and keys they list, and {@link ReferenceDocsTest} keeps them equal to the code.
     */
    @Test
    void shouldKeepEveryHandWrittenPageShort() throws Exception {
        Set<Path> generated = Set.of(ReferenceDocsTest.CLI, ReferenceDocsTest.CONFIGURATION);
        List<String> tooLong = new ArrayList<>();
        for (Path page : pages()) {
            int lines = Files.readAllLines(page).size();
            if (!page.equals(README) && !generated.contains(page) && lines > PAGE_LINES) {
                tooLong.add(page + ": " + lines + " lines");
            }
        }
        assertThat(tooLong).as("pages over " + PAGE_LINES + " lines: say each thing once, link instead of repeating").isEmpty();
        assertThat(pages()).as("the generated references are among the pages, so leaving them out means something")
                .contains(ReferenceDocsTest.CLI, ReferenceDocsTest.CONFIGURATION);
    }

    /** A test class named in a table, with the method after {@code #} if one is named. */
    private static final Pattern NAMED_TEST = Pattern.compile("`([A-Z][A-Za-z0-9]*(?:Test|IT))(?:#([A-Za-z0-9_]+))?`");

    /** The promise tables name the tests behind each promise: every one named must exist. */
    @Test
    void shouldNameOnlyTestsThatExistInThePromiseTables() throws Exception {
        Map<String, Path> sources = new HashMap<>();
        try (Stream<Path> files = Files.walk(Path.of("src/test/java"))) {
            files.filter(f -> f.toString().endsWith(".java"))
                    .forEach(f -> sources.put(f.getFileName().toString().replace(".java", ""), f));
        }
        List<String> missing = new ArrayList<>();
        int named = 0;
        for (String[] table : new String[][] {{"design.md", "## Guarantee by guarantee"}, {"development.md", "## Promise by promise"}}) {
            String section = Files.readString(SITE.resolve(table[0])).split(Pattern.quote(table[1] + "\n"))[1].split("\n## ")[0];
            for (String row : section.lines().filter(line -> line.startsWith("| ")).toList()) {
                String tests = row.substring(row.lastIndexOf(" | ") + 3);
                Matcher test = NAMED_TEST.matcher(tests);
                while (test.find()) {
                    named++;
                    Path source = sources.get(test.group(1));
                    if (source == null) {
                        missing.add(table[0] + ": no test class " + test.group(1));
                    } else if (test.group(2) != null && !Files.readString(source).contains(" " + test.group(2) + "(")) {
                        missing.add(table[0] + ": no method " + test.group(2) + " in " + test.group(1));
                    }
                }
            }
        }
        assertThat(named).as("tests named in the tables").isGreaterThan(20);
        assertThat(missing).isEmpty();
    }

    @Test
    void shouldResolveEveryRelativeLinkAndAnchor() throws Exception {
        List<String> broken = new ArrayList<>();
        for (Path page : pages()) {
            Matcher link = LINK.matcher(Files.readString(page));
            while (link.find()) {
                String target = link.group(1);
                if (target.matches("^[a-z]+:.*")) {
                    continue;   // http:, https:, mailto: are not ours to check
                }
                String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
                String anchor = target.contains("#") ? target.substring(target.indexOf('#') + 1) : null;
                Path resolved = file.isEmpty() ? page : page.getParent() == null ? Path.of(file) : page.getParent().resolve(file).normalize();
                if (!Files.exists(resolved)) {
                    broken.add(page + ": " + target + " (no such file)");
                } else if (anchor != null && resolved.toString().endsWith(".md") && !anchors(resolved).contains(anchor)) {
                    broken.add(page + ": " + target + " (no such heading)");
                }
            }
        }
        assertThat(broken).isEmpty();
    }

    @Test
    void shouldFindAnchorsAsGitHubMakesThem() throws Exception {
        assertThat(slug("Recovery: the changelog and the runbooks")).isEqualTo("recovery-the-changelog-and-the-runbooks");
        assertThat(slug("On an existing cluster (Kafka 3.x or 4.x)")).isEqualTo("on-an-existing-cluster-kafka-3x-or-4x");
        assertThat(slug("Sequences: dense numbers per tag (`id.mode=sequence`)")).isEqualTo("sequences-dense-numbers-per-tag-idmodesequence");
    }

    private static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(README));
        try (Stream<Path> site = Files.list(SITE)) {
            site.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    static Set<String> anchors(Path page) {
        Set<String> anchors = new HashSet<>();
        boolean code = false;
        try {
            for (String line : Files.readAllLines(page)) {
                if (line.startsWith("```")) {
                    code = !code;
                }
                Matcher heading = HEADING.matcher(line);
                if (!code && heading.matches()) {
                    anchors.add(slug(heading.group(1)));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return anchors;
    }

    /** GitHub's heading anchor: lower case, punctuation other than - and _ dropped, spaces as dashes. */
    static String slug(String heading) {
        return heading.trim().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-');
    }
}
