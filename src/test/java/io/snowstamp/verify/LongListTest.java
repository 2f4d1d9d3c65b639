package io.snowstamp.verify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LongListTest {

    @Test
    void shouldKeepValuesAcrossChunkBoundaries() {
        LongList list = new LongList();
        int n = 5 * 32_768 + 17;
        for (int i = 0; i < n; i++) {
            list.add(i * 3L - 7);
        }

        assertThat(list.size()).isEqualTo(n);
        for (int i = 0; i < n; i++) {
            assertThat(list.get(i)).isEqualTo(i * 3L - 7);
        }
    }

    @Test
    void shouldRejectIndexesOutsideTheList() {
        LongList list = new LongList();
        list.add(1);

        assertThatThrownBy(() -> list.get(1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> list.get(-1)).isInstanceOf(IndexOutOfBoundsException.class);
    }
}
