package io.snowstamp.cli;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

class TextTableTest {
    @Test
    void shouldAlignColumnsAndRightAlignNumbers() {
        TextTable table = new TextTable("partition", "holder", "lastId");
        table.add(0, "a/t1", 912108932720230400L);
        table.add(12, "longer-holder/t2", "-");
        StringWriter out = new StringWriter();

        table.print(new PrintWriter(out));

        assertThat(out.toString().split("\\R")).containsExactly(
                "partition  holder                        lastId",
                "        0  a/t1              912108932720230400",
                "       12  longer-holder/t2                   -");
    }

    @Test
    void shouldFormatDurationsForPeople() {
        assertThat(StateText.duration(850)).isEqualTo("850ms");
        assertThat(StateText.duration(12_345)).isEqualTo("12.3s");
        assertThat(StateText.duration(245_000)).isEqualTo("4m05s");
        assertThat(StateText.duration(3 * 3_600_000 + 20 * 60_000)).isEqualTo("3h20m");
        assertThat(StateText.duration(2 * 86_400_000L + 4 * 3_600_000)).isEqualTo("2d04h");
        assertThat(StateText.signed(1000)).isEqualTo("+1.0s");
        assertThat(StateText.signed(-9_500)).isEqualTo("-9.5s");
        assertThat(StateText.ago(10_000, 7_000)).isEqualTo("3.0s ago");
        assertThat(StateText.ago(10_000, 12_000)).isEqualTo("in 2.0s");
        assertThat(StateText.iso(0)).isEqualTo("1970-01-01T00:00:00.000Z");
    }
}
