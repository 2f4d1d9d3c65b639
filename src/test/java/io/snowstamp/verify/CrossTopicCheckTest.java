package io.snowstamp.verify;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class CrossTopicCheckTest {
    @Test
    void shouldCountIdsFoundInMoreThanOneTopicOnly() {
        CrossTopicCheck check = new CrossTopicCheck(List.of("a", "b", "c"));
        check.add(0, 5);
        check.add(0, 5);        // a duplicate inside a: the Verifier's job, not shared
        check.add(0, 1);
        check.add(1, 5);
        check.add(1, 2);
        check.add(2, 5);
        check.add(2, 3);
        CrossTopicCheck.Result result = check.finish();
        assertThat(result.shared()).isEqualTo(2);
        assertThat(result.examples()).containsExactly("shared id 5 in a and b and c");
        assertThat(new CrossTopicCheck(List.of("a", "b")).finish().shared()).isZero();
    }
}
