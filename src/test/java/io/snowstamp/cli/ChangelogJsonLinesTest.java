package io.snowstamp.cli;

import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ChangelogEntry;
import io.snowstamp.recovery.StateChange;
import io.snowstamp.state.WorkerState;
import io.snowstamp.testing.TestConfig;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The exact JSON lines of {@code changelog inspect} and {@code history}: names, order and nulls as their help documents. */
class ChangelogJsonLinesTest {
    private static final IdLayout LAYOUT = TestConfig.of().ids().layout();
    private static final String FP = LAYOUT.fingerprint();
    private static final WorkerState STATE = new WorkerState(FP, 3, 2, "h/t", 10, 20, 30, 40, 50);

    @Test
    void shouldWriteAHistoryLineWithTheStateFieldsInline() {
        String line = JsonText.of(ChangelogHistoryCommand.JsonLine.of(new ChangelogEntry(0, 7, 99, 0, STATE),
                new StateChange(List.of("lease", "lastId"), "desc")));

        assertThat(line).isEqualTo("{\"partition\":0,\"offset\":7,\"writtenAt\":50,\"recordTimestamp\":99,"
                + "\"layoutFingerprint\":\"" + FP + "\",\"workerId\":3,\"epoch\":2,\"holder\":\"h/t\",\"acquiredAt\":10,"
                + "\"heartbeatAt\":20,\"lastId\":30,\"reservedUntil\":40,\"changes\":[\"lease\",\"lastId\"],\"change\":\"desc\"}");
    }

    @Test
    void shouldWriteATombstoneAsANullState() {
        String line = JsonText.of(ChangelogHistoryCommand.JsonLine.of(new ChangelogEntry(1, 8, 99, 1, null),
                new StateChange(List.of("tombstone"), "gone")));

        assertThat(line).isEqualTo("{\"partition\":1,\"offset\":8,\"writtenAt\":null,\"recordTimestamp\":99,\"state\":null,"
                + "\"changes\":[\"tombstone\"],\"change\":\"gone\"}");
    }

    @Test
    void shouldWriteAnInspectLineInTheDocumentedOrder() {
        WorkerState noHeartbeat = new WorkerState(FP, 3, 2, "h/t", 10, 0, 30, 40, 0);

        String line = JsonText.of(ChangelogInspectCommand.JsonLine.of(new ChangelogEntry(0, 7, 99, 0, noHeartbeat), LAYOUT, 1000));

        assertThat(line).isEqualTo("{\"partition\":0,\"workerId\":3,\"epoch\":2,\"holder\":\"h/t\","
                + "\"acquiredAt\":\"1970-01-01T00:00:00.010Z\",\"heartbeatAt\":null,\"heartbeatAgoMillis\":null,\"lastId\":30,"
                + "\"lastIdTime\":\"2020-01-01T00:00:00.000Z\",\"reservedUntil\":40,\"reservedUntilTime\":\"2020-01-01T00:00:00.000Z\","
                + "\"leadMillis\":1577836799000,\"layoutFingerprint\":\"" + FP + "\",\"layoutMatches\":true,\"offset\":7,"
                + "\"writtenAt\":null,\"recordTimestamp\":\"1970-01-01T00:00:00.099Z\"}");
    }
}
