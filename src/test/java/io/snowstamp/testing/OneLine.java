package io.snowstamp.testing;

import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The shape of an error a person reads: one line, no Java class name, no stack trace. */
public final class OneLine {
    /** A Java exception or error class name, as a person should never see one. */
    public static final Pattern CLASS_NAME = Pattern.compile("\\b[A-Z]\\w+(Exception|Error)\\b");
    /** A stack frame. */
    public static final Pattern STACK_FRAME = Pattern.compile("(?m)^\\s*at (io|org|java|jdk|kafka|sun)\\.");

    private OneLine() {
    }

    /** {@code stderr} is exactly one line, starting {@code error: }, with no class name and no stack frame. */
    public static void assertOneErrorLine(String stderr, String context) {
        assertThat(stderr.strip().lines()).as("one line on stderr\n%s", context).hasSize(1);
        assertThat(stderr).as(context).startsWith("error: ");
        assertNoJavaInternals(stderr, context);
    }

    /** Neither a class name nor a stack frame in {@code text}. */
    public static void assertNoJavaInternals(String text, String context) {
        assertThat(CLASS_NAME.matcher(text).find()).as("a Java class name in\n%s", context).isFalse();
        assertThat(STACK_FRAME.matcher(text).find()).as("a stack frame in\n%s", context).isFalse();
    }
}
