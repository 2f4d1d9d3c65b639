package io.snowstamp.cli;

import io.snowstamp.config.ConfigException;
import io.snowstamp.runtime.Errors;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/**
 * snowstamp's command line. Only {@link #main} calls {@code System.exit}; tests run
 * {@link #commandLine()} with {@code execute()} and captured writers.
 */
@Command(name = "snowstamp", mixinStandardHelpOptions = true, scope = CommandLine.ScopeType.INHERIT, versionProvider = Version.class,
        description = "Gives every record of a Kafka topic a unique, time-ordered 64-bit ID that is never issued twice.",
        subcommands = {DemoCommand.class, RunCommand.class, BrokerCommand.class, TopicsCommand.class,
                ProduceCommand.class, ConsumeCommand.class, DecodeCommand.class, VerifyCommand.class, BenchCommand.class,
                ChangelogCommand.class, RecoverCommand.class, TagsCommand.class, WorkersCommand.class,
                CommandLine.HelpCommand.class},
        footer = {"", "Exit status: 0 ok, 1 failure, 2 usage error. Errors are one line on stderr.",
                "Every command has --help."})
public final class Main implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line with snowstamp's error handling: one line on stderr, exit 1 or 2. */
    public static CommandLine commandLine() {
        CommandLine cmd = new CommandLine(new Main());
        cmd.setExecutionExceptionHandler((error, commandLine, parseResult) -> {
            commandLine.getErr().println("error: " + Errors.oneLine(error));
            commandLine.getErr().flush();
            return error instanceof ConfigException ? 2 : 1;
        });
        cmd.setParameterExceptionHandler((error, args) -> {
            CommandLine failed = error.getCommandLine();
            PrintWriter err = failed.getErr();
            err.println("error: " + error.getMessage() + " (see '" + failed.getCommandSpec().qualifiedName() + " --help')");
            err.flush();
            return 2;
        });
        return cmd;
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
