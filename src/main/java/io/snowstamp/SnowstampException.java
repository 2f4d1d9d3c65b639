package io.snowstamp;

/**
 * Root of snowstamp's own exceptions. Its message is written for the person running snowstamp:
 * the CLI prints it as the single error line, so it names what was wrong and what is accepted.
 */
public class SnowstampException extends RuntimeException {
    public SnowstampException(String message) {
        super(message);
    }

    public SnowstampException(String message, Throwable cause) {
        super(message, cause);
    }
}
