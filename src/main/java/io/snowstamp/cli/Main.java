package io.snowstamp.cli;

import io.snowstamp.config.ConfigException;
import io.snowstamp.config.Durations;
import io.snowstamp.runtime.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * snowstamp's command line. Only {@link #main} calls {@code System.exit}; tests run
 * {@link #commandLine()} with {@code execute()} and captured writers.
 *
 * <p>Exit status: 0 ok (also after a clean stop of {@code run} or {@code broker} by SIGTERM or
 * Ctrl-C), 1 failure, 2 usage error (an unknown or malformed option, a bad configuration value, a
 * file named on the command line that cannot be read). Every error is one line on stderr without a
 * Java class name; {@code --verbose} adds the stack trace.
 */
@Command(name = "snowstamp", mixinStandardHelpOptions = true, scope = CommandLine.ScopeType.INHERIT, versionProvider = Version.class,
        description = "Gives every record of a Kafka topic a unique, time-ordered 64-bit ID that is never issued twice.",
        subcommands = {DemoCommand.class, RunCommand.class, BrokerCommand.class, TopicsCommand.class,
                ProduceCommand.class, ConsumeCommand.class, DecodeCommand.class, VerifyCommand.class, BenchCommand.class,
                ChangelogCommand.class, RecoverCommand.class, TagsCommand.class, WorkersCommand.class,
                CommandLine.HelpCommand.class},
        footer = {"", Main.EXIT_STATUS, "Errors are one line on stderr; --verbose adds the stack trace.", "Every command has --help.",
                "", "Examples:", "  snowstamp demo", "  snowstamp run --bootstrap-servers kafka:9092 --application-id orders"})
public final class Main implements Callable<Integer> {
    /** The last line of every help screen. */
    static final String EXIT_STATUS = "Exit status: 0 ok (also after SIGTERM or Ctrl-C), 1 failure, 2 usage error.";
    private static final Logger log = LoggerFactory.getLogger(Main.class);

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--verbose", scope = CommandLine.ScopeType.INHERIT,
            description = "on an error, also print its stack trace (default: off)")
    boolean verbose;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line with snowstamp's error handling: one line on stderr, exit 1 or 2. */
    public static CommandLine commandLine() {
        CommandLine cmd = new CommandLine(new Main());
        // one duration syntax for every option, the same as configuration keys (10s, 5m, 500ms)
        cmd.registerConverter(Duration.class, text -> {
            Duration parsed = Durations.parse(text);
            if (parsed == null) {
                throw new CommandLine.TypeConversionException("accepted " + Durations.ACCEPTED);
            }
            return parsed;
        });
        cmd.getSubcommands().values().forEach(Main::endHelpWithExitStatus);
        cmd.setExecutionExceptionHandler((error, commandLine, parseResult) -> {
            PrintWriter err = commandLine.getErr();
            err.println("error: " + Errors.oneLine(error));
            if (parseResult.originalArgs().contains("--verbose")) {
                error.printStackTrace(err);
            } else {
                log.debug("stack trace of the error above", error);
            }
            err.flush();
            return error instanceof ConfigException ? 2 : 1;
        });
        cmd.setParameterExceptionHandler((error, args) -> {
            CommandLine failed = error.getCommandLine();
            PrintWriter err = failed.getErr();
            err.println("error: " + message(error) + " (see '" + failed.getCommandSpec().qualifiedName() + " --help')");
            err.flush();
            return 2;
        });
        return cmd;
    }

    /**
     * A parse error's message; a value no converter accepts in snowstamp's own form,
     * {@code --timeout=soon is invalid: accepted a duration such as ...}, like configuration errors.
     */
    private static String message(CommandLine.ParameterException error) {
        String text = error.getMessage();
        if (error.getCause() instanceof CommandLine.TypeConversionException && error.getArgSpec() != null && error.getValue() != null) {
            String name = error.getArgSpec() instanceof CommandLine.Model.OptionSpec option ? option.longestName()
                    : error.getArgSpec().paramLabel();
            text = name + "=" + error.getValue() + " is invalid: " + error.getCause().getMessage();
        }
        return text.replaceAll("\\s*\\R\\s*", " ").trim();
    }

    /** Every subcommand's help ends with its examples (its own footer), then the exit status, said once here. */
    private static void endHelpWithExitStatus(CommandLine command) {
        if (command.getCommand() instanceof CommandLine.HelpCommand) {
            return;
        }
        var usage = command.getCommandSpec().usageMessage();
        String[] footer = java.util.Arrays.copyOf(usage.footer(), usage.footer().length + 2);
        footer[footer.length - 2] = "";
        footer[footer.length - 1] = EXIT_STATUS;
        usage.footer(footer);
        command.getSubcommands().values().forEach(Main::endHelpWithExitStatus);
    }

    /** Bare {@code snowstamp}: a usage error, the usage on stderr. */
    @Override
    public Integer call() {
        return usageError(spec);
    }

    /** For a command that needs a subcommand and got none: usage on stderr, exit 2. */
    static int usageError(CommandLine.Model.CommandSpec spec) {
        spec.commandLine().usage(spec.commandLine().getErr());
        spec.commandLine().getErr().flush();
        return 2;
    }
}
