package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import io.snowstamp.state.WorkerState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StateFileTest {
    private static final String FP = "t41.d0.w10.s12.u1ms.e1577836800000.mid";
    private static final String HEADER = "{\"format\":\"snowstamp-worker-state\",\"version\":1,\"applicationId\":\"orders\","
            + "\"exportedAt\":\"2026-01-01T00:00:00.000Z\",\"layout\":\"" + FP + "\"}";
    private static final String LINE_0 = "{\"partition\":0,\"layoutFingerprint\":\"" + FP + "\",\"workerId\":0,\"epoch\":3,"
            + "\"holder\":\"host-a/t1\",\"acquiredAt\":1767225600000,\"heartbeatAt\":1767225605000,\"lastId\":123,\"reservedUntil\":456}";

    private static StateFile read(String text) {
        return StateFile.read(new BufferedReader(new StringReader(text)), "backup.jsonl");
    }

    private static String written(StateFile file) {
        StringWriter out = new StringWriter();
        file.write(new PrintWriter(out));
        return out.toString();
    }

    @Test
    void shouldWriteTheDocumentedLinesAndReadThemBack() {
        Map<Integer, WorkerState> states = new TreeMap<>();
        states.put(1, new WorkerState(FP, 1, 0, "", 0, 0, -1, -1));
        states.put(0, new WorkerState(FP, 0, 3, "host-a/t1", 1767225600000L, 1767225605000L, 123, 456));
        StateFile file = new StateFile(new StateFile.Header("orders", "2026-01-01T00:00:00.000Z", FP), new TreeMap<>(states));

        String text = written(file);

        assertThat(text.split("\\R")).containsExactly(HEADER, LINE_0, "{\"partition\":1,\"layoutFingerprint\":\"" + FP
                + "\",\"workerId\":1,\"epoch\":0,\"holder\":\"\",\"acquiredAt\":0,\"heartbeatAt\":0,\"lastId\":-1,\"reservedUntil\":-1}");
        assertThat(read(text)).isEqualTo(file);
    }

    @Test
    void shouldSkipBlankLines() {
        assertThat(read("\n" + HEADER + "\n\n" + LINE_0 + "\n\n").states()).containsOnlyKeys(0);
    }

    @Test
    void shouldRefuseAnotherFormatOrVersion() {
        assertThatThrownBy(() -> read("{\"format\":\"kafka-dump\",\"version\":1}\n"))
                .isInstanceOf(SnowstampException.class)
                .hasMessage("backup.jsonl is not a snowstamp worker-state export: line 1 has format \"kafka-dump\", expected \"snowstamp-worker-state\"");
        assertThatThrownBy(() -> read(HEADER.replace("\"version\":1", "\"version\":2") + "\n" + LINE_0))
                .hasMessage("backup.jsonl has format version 2: this snowstamp reads version 1 only (written by a newer snowstamp?)");
        assertThatThrownBy(() -> read(LINE_0)).hasMessageContaining("line 1 has format (none)");
        assertThatThrownBy(() -> read("")).hasMessageStartingWith("backup.jsonl is empty");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "\"lastId\":123|\"lastId\":\"123\"|line 2: lastId=\"123\" is invalid: accepted a whole number -1..9223372036854775807",
            "\"lastId\":123|\"lastId\":-2|line 2: lastId=-2 is invalid",
            "\"epoch\":3|\"epoch\":3.5|line 2: epoch=3.5 is invalid",
            "\"lastId\":123,|\"lastid\":123,|line 2: unknown field \"lastid\": accepted acquiredAt, epoch, heartbeatAt, holder, lastId, layoutFingerprint, partition, reservedUntil, workerId",
            ",\"reservedUntil\":456|''|line 2: missing field reservedUntil",
            "\"partition\":0|\"partition\":-1|line 2: partition=-1 is invalid",
            "{|[|line 2: not valid JSON"})
    void shouldRefuseAnyLineThatIsNotExactlyAState(String from, String to, String message) {
        assertThatThrownBy(() -> read(HEADER + "\n" + LINE_0.replace(from, to)))
                .isInstanceOf(SnowstampException.class)
                .hasMessageStartingWith("backup.jsonl " + message);
    }

    @Test
    void shouldRefuseAPartitionTwice() {
        assertThatThrownBy(() -> read(HEADER + "\n" + LINE_0 + "\n" + LINE_0))
                .hasMessage("backup.jsonl line 3: partition 0 appears twice");
    }
}
