package io.snowstamp.verify;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class VerifierDeadLetterTest {
    @Test
    void shouldAccountForSourceRecordsThroughDeadLetters() {
        Verifier verifier = new Verifier("out", "in");
        verifier.output(0, 0, "100", "in/0/0");
        verifier.output(0, 1, "101", "in/0/2");
        verifier.deadLetter("in", 0, 1);
        for (long offset = 0; offset < 3; offset++) {
            verifier.source(0, offset);
        }

        VerifyReport report = verifier.finish();
        assertThat(report.summaryLine()).isEqualTo("records=2 duplicates=0 missing=0 extra=0");
        assertThat(report.clean()).isTrue();
        assertThat(verifier.deadLetters()).isEqualTo(1);
    }

    @Test
    void shouldCountARecordBothStampedAndDeadLetteredAsExtraAndAnUnaccountedOneAsMissing() {
        Verifier verifier = new Verifier("out", "in");
        verifier.output(0, 0, "100", "in/0/0");
        verifier.deadLetter("in", 0, 0);
        verifier.deadLetter("other", 0, 5);
        verifier.deadLetter(null, -1, -1);
        verifier.source(0, 0);
        verifier.source(0, 1);

        VerifyReport report = verifier.finish();
        assertThat(report.summaryLine()).isEqualTo("records=1 duplicates=0 missing=1 extra=3");
        assertThat(report.problems()).anySatisfy(p -> assertThat(p).contains("a dead letter with source other-0@5"))
                .anySatisfy(p -> assertThat(p).contains("a dead letter with no source headers"))
                .anySatisfy(p -> assertThat(p).startsWith("missing: in-0@1"));
    }

    @Test
    void shouldRefuseDeadLettersWithoutASourceOrAfterTheSource() {
        assertThatThrownBy(() -> new Verifier("out", null).deadLetter("in", 0, 0)).isInstanceOf(IllegalStateException.class);
        Verifier verifier = new Verifier("out", "in");
        verifier.source(0, 0);
        assertThatThrownBy(() -> verifier.deadLetter("in", 0, 0)).isInstanceOf(IllegalStateException.class);
    }
}
