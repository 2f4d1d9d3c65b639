package io.snowstamp.verify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class IntRunListTest {

    @Test
    void shouldReadBackRunsInOrder() {
        int[] values = {5, 5, 5, -1, -1, 7, 5, Integer.MAX_VALUE, Integer.MIN_VALUE, 0, 0};
        IntRunList list = new IntRunList();
        for (int value : values) {
            list.add(value);
        }

        IntRunList.Reader reader = list.reader();
        for (int value : values) {
            assertThat(reader.next()).isEqualTo(value);
        }
        assertThat(list.size()).isEqualTo(values.length);
        assertThatThrownBy(reader::next).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void shouldReadAChangeAtEveryEntry() {
        IntRunList list = new IntRunList();
        int n = 200_000;
        for (int i = 0; i < n; i++) {
            list.add(i % 3);
        }

        IntRunList.Reader reader = list.reader();
        for (int i = 0; i < n; i++) {
            assertThat(reader.next()).isEqualTo(i % 3);
        }
    }
}
