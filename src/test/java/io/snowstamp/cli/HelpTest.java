package io.snowstamp.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Walks every command of the tree picocli builds (not a hand-kept list, so a new command is
 * covered the day it is added) and checks its help: defaults stated, examples given, one
 * vocabulary for the options every command shares.
 */
class HelpTest {
    private static List<CommandSpec> commands() {
        List<CommandSpec> all = new ArrayList<>();
        collect(Main.commandLine(), all);
        return all;
    }

    private static void collect(CommandLine command, List<CommandSpec> into) {
        if (command.getCommand() instanceof CommandLine.HelpCommand) {
            return;     // picocli's own 'help'
        }
        into.add(command.getCommandSpec());
        command.getSubcommands().values().forEach(sub -> collect(sub, into));
    }

    private static boolean isFlag(OptionSpec option) {
        return option.type() == boolean.class || option.type() == Boolean.class;
    }

    @Test
    void shouldWalkTheWholeTree() {
        assertThat(commands()).extracting(CommandSpec::qualifiedName)
                .contains("snowstamp", "snowstamp run", "snowstamp changelog import", "snowstamp tags set-step", "snowstamp topics apply")
                .hasSizeGreaterThan(15);
    }

    @Test
    void shouldEndEveryHelpWithAnExample() {
        assertThat(commands()).allSatisfy(command -> {
            String footer = String.join("\n", command.usageMessage().footer());
            assertThat(footer).as("footer of '%s --help'", command.qualifiedName())
                    .containsPattern("Examples?:").containsPattern("(?m)^  snowstamp ");
        });
    }

    @Test
    void shouldStateTheDefaultOfEveryOptionThatTakesAValue() {
        assertThat(commands()).allSatisfy(command -> assertThat(command.options())
                .filteredOn(option -> !isFlag(option) && !option.usageHelp() && !option.versionHelp() && !option.required())
                .allSatisfy(option -> assertThat(String.join(" ", option.description()).toLowerCase(Locale.ROOT))
                        .as("'%s %s' must state its default", command.qualifiedName(), option.longestName())
                        .contains("default")));
    }

    @Test
    void shouldMeanGiveUpAfterByTimeoutEverywhereAndParseItOnce() {
        List<String> seen = new ArrayList<>();
        commands().forEach(command -> {
            OptionSpec timeout = command.findOption("--timeout");
            if (timeout != null) {
                seen.add(command.qualifiedName());
                assertThat(timeout.type()).as(command.qualifiedName()).isEqualTo(Duration.class);
                assertThat(String.join(" ", timeout.description())).as(command.qualifiedName()).startsWith("give up");
            }
        });
        assertThat(seen).contains("snowstamp verify", "snowstamp consume", "snowstamp produce", "snowstamp topics apply",
                "snowstamp recover", "snowstamp changelog inspect", "snowstamp tags list");
    }

    @Test
    void shouldOfferTheSameOptionForTheSameThing() {
        for (String name : List.of("snowstamp recover", "snowstamp run", "snowstamp changelog inspect", "snowstamp tags list")) {
            CommandSpec command = commands().stream().filter(c -> c.qualifiedName().equals(name)).findFirst().orElseThrow();
            assertThat(command.findOption("--application-id")).as(name + " --application-id").isNotNull();
        }
        commands().forEach(command -> {
            OptionSpec format = command.findOption("--format");
            if (format != null) {
                assertThat(format.completionCandidates()).as(command.qualifiedName()).containsExactly("table", "json");
            }
        });
        assertThat(commands().stream().filter(c -> c.qualifiedName().equals("snowstamp recover")).findFirst().orElseThrow()
                .findOption("--format")).isNotNull();
        // consume's old "--timeout 5s" meant "idle for"; that is --idle-timeout now, and --idle stays as its short alias
        CommandSpec consume = commands().stream().filter(c -> c.qualifiedName().equals("snowstamp consume")).findFirst().orElseThrow();
        assertThat(consume.findOption("--idle-timeout").names()).contains("--idle");
    }
}
