package io.snowstamp.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConfigException;
import io.snowstamp.ownership.LayoutChangedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class ErrorsTest {

    @Test
    void shouldReturnTheMessageOfASnowstampException() {
        assertThat(Errors.oneLine(new ConfigException("id.preset", "x", "one of a, b")))
                .isEqualTo("id.preset=x is invalid: accepted one of a, b");
    }

    @Test
    void shouldFindASnowstampExceptionWrappedByKafkaStreams() {
        LayoutChangedException cause = new LayoutChangedException(3, "t41.old", "t39.new");
        Throwable error = new StreamsException("failed to initialize processor stamp",
                new StreamsException("task [0_3] failed", cause));

        assertThat(Errors.oneLine(error)).isEqualTo(cause.getMessage());
    }

    @Test
    void shouldNameTheTransactionalIdPrefixWhenTheBrokerRefusedIt() {
        Throwable refused = new StreamsException("task [0_1] failed",
                new org.apache.kafka.common.errors.TransactionalIdAuthorizationException("Transactional Id authorization failed."));

        assertThat(Errors.oneLine(Errors.namingTransactionalIds(refused, "orders")))
                .contains("transactional id authorization failed").contains("prefix orders-").contains("WRITE");
        StreamsException other = new StreamsException("other");
        assertThat(Errors.namingTransactionalIds(other, "orders")).isSameAs(other);
    }

    @Test
    void shouldReturnTheInnermostSnowstampException() {
        Throwable error = new SnowstampException("stamper stopped",
                new StreamsException("task [0_0] failed", new ConfigException("id.worker-offset", 6, "the stored offset")));

        assertThat(Errors.oneLine(error)).isEqualTo("id.worker-offset=6 is invalid: accepted the stored offset");
    }

    @Test
    void shouldFlattenLineBreaksIntoSingleSpaces() {
        assertThat(Errors.oneLine(new SnowstampException("first line\n  second line\r\nthird\rfourth  \n")))
                .isEqualTo("first line second line third fourth");
        assertThat(Errors.oneLine(new IllegalStateException("a\n\nb")))
                .isEqualTo("a b");
    }

    @Test
    void shouldGiveTheDeepestMessageWithoutAClassNameWhenNoneIsSnowstamps() {
        Throwable error = new ExecutionException("wrapper", new UncheckedIOException("reading", new IOException("disk full")));

        assertThat(Errors.oneLine(error)).isEqualTo("disk full");
    }

    @Test
    void shouldNameTheFileOfAFileError() {
        assertThat(Errors.oneLine(new java.io.UncheckedIOException(new java.nio.file.NoSuchFileException("/missing"))))
                .isEqualTo("/missing: no such file or directory");
        assertThat(Errors.oneLine(new java.nio.charset.MalformedInputException(1))).isEqualTo("the input is not UTF-8 text");
    }

    @Test
    void shouldSkipKafkaStreamsWrappersButKeepTheirOwnErrors() {
        assertThat(Errors.oneLine(new StreamsException("wrapper", new IllegalArgumentException("bad input"))))
                .isEqualTo("bad input");
        assertThat(Errors.oneLine(new StreamsException("no cause here")))
                .isEqualTo("no cause here");
    }

    @Test
    void shouldSayUnexpectedForAnExceptionWithoutMessage() {
        assertThat(Errors.oneLine(new NullPointerException())).isEqualTo(Errors.UNEXPECTED);
        assertThat(Errors.oneLine(new RuntimeException("outer", new NullPointerException())))
                .isEqualTo("outer");
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)  // guards against looping forever, not a speed check
    void shouldStopAtACircularCauseChain() {
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b", a);
        a.initCause(b);

        assertThat(Errors.oneLine(a)).isEqualTo("b");
        SnowstampException own = new SnowstampException("own");
        RuntimeException loop = new RuntimeException("loop", own);
        own.initCause(loop);
        assertThat(Errors.oneLine(loop)).isEqualTo("own");
    }

    @Test
    void shouldCallOnlySnowstampsOwnErrorsExplained() {
        assertThat(Errors.explained(new RuntimeException("wrapper", new SnowstampException("own")))).isTrue();
        assertThat(Errors.explained(new io.snowstamp.id.IdSpaceExhaustedException(io.snowstamp.id.IdLayout.preset("snowflake"), 1L << 42))).isTrue();
        assertThat(Errors.explained(new IllegalStateException("a bug"))).isFalse();
    }
}
