package io.snowstamp.testing;

import io.snowstamp.cli.Main;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;

/** Runs a snowstamp command in-process through picocli with captured stdout and stderr. */
public final class Cli {
    private Cli() {
    }

    /** The outcome of one command. */
    public record Result(int exitCode, String out, String err) {
        public String[] outLines() {
            return out.isEmpty() ? new String[0] : out.split("\\R");
        }

        public String lastLine() {
            String[] lines = outLines();
            return lines.length == 0 ? "" : lines[lines.length - 1];
        }

        /** For assertion messages: both streams. */
        @Override
        public String toString() {
            return "exit=" + exitCode + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
        }
    }

    public static Result run(String... args) {
        CommandLine cmd = Main.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        int code = cmd.execute(args);
        return new Result(code, out.toString(), err.toString());
    }

    /** {@code args} followed by {@code more}. */
    public static String[] concat(String[] args, String... more) {
        String[] all = Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, all, args.length, more.length);
        return all;
    }
}
