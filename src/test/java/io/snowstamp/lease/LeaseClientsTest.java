package io.snowstamp.lease;

import org.junit.jupiter.api.Test;

import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

class LeaseClientsTest {
    /**
     * What the lease's three clients are made with: the request timeout they are given (3 s, design.md: "the lease's
     * included", TuningTest), and what design.md's lease rounds rest on, whatever the settings given say: the reader reads
     * committed records only and, at a position out of range, starts again from the log's start; the writer's records
     * are acknowledged by every in-sync replica.
     */
    @Test
    void shouldKeepTheRequestTimeoutGivenAndForceWhatTheLeaseRoundsRestOn() {
        Properties given = new Properties();
        given.put("request.timeout.ms", "3000");
        given.put("isolation.level", "read_uncommitted");
        given.put("auto.offset.reset", "latest");
        given.put("group.id", "someone's");
        given.put("acks", "1");

        assertThat(LeaseClients.adminProperties(given, "app-i")).containsEntry("request.timeout.ms", "3000");
        assertThat(LeaseClients.readerProperties(given, "app-i")).containsEntry("request.timeout.ms", "3000")
                .containsEntry("isolation.level", "read_committed").containsEntry("auto.offset.reset", "earliest")
                .doesNotContainKey("group.id");
        assertThat(LeaseClients.writerProperties(given, "app-i")).containsEntry("request.timeout.ms", "3000")
                .containsEntry("acks", "all");
    }
}
