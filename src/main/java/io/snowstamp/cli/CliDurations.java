package io.snowstamp.cli;

import io.snowstamp.config.Durations;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

import java.time.Duration;

/** Command-line durations, in the same syntax as configuration durations. */
final class CliDurations {
    private CliDurations() {
    }

    static Duration parse(CommandSpec spec, String option, String text) {
        Duration parsed = Durations.parse(text);
        if (parsed == null) {
            throw new ParameterException(spec.commandLine(), option + "=" + text + " is invalid: accepted " + Durations.ACCEPTED);
        }
        return parsed;
    }
}
