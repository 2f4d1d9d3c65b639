package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ReplicationTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "1 | 1 | 1 | replication.factor=1 min.insync.replicas=1 (auto: 1 broker)",
            "2 | 2 | 1 | replication.factor=2 min.insync.replicas=1 (auto: 2 brokers)",
            "3 | 3 | 2 | replication.factor=3 min.insync.replicas=2 (auto: 3 brokers)",
            "5 | 3 | 2 | replication.factor=3 min.insync.replicas=2 (auto: 3 of 5 brokers)",
    })
    void shouldGiveMinOfThreeAndBrokersReplicasAndTwoInSyncFromThreeOn(int brokers, short factor, int minInsync, String line) {
        Replication chosen = Replication.forBrokers(brokers);
        assertThat(chosen.factor()).isEqualTo(factor);
        assertThat(chosen.minInsyncReplicas()).isEqualTo(minInsync);
        assertThat(chosen.describe()).isEqualTo(line);
        assertThat(chosen.topicConfigs()).isEqualTo(Map.of("min.insync.replicas", Integer.toString(minInsync)));
    }

    @Test
    void shouldMatchTheMinimumToAFactorChosenElsewhere() {
        assertThat(Replication.forFactor((short) 1).describe()).isEqualTo("replication.factor=1 min.insync.replicas=1");
        assertThat(Replication.forFactor((short) 2).minInsyncReplicas()).isEqualTo(1);
        assertThat(Replication.forFactor((short) 3).minInsyncReplicas()).isEqualTo(2);
        assertThat(Replication.forFactor((short) 5).minInsyncReplicas()).as("two of five: one broker may fail, a write is on two disks")
                .isEqualTo(2);
        assertThat(Replication.forFactor((short) 3).why()).isEmpty();
    }

    @Test
    void shouldRefuseAClusterWithoutBrokersAndAMinimumAboveTheFactor() {
        assertThatThrownBy(() -> Replication.forBrokers(0)).isInstanceOf(SnowstampException.class)
                .hasMessage("the cluster lists no broker: cannot choose a replication factor");
        assertThatThrownBy(() -> new Replication((short) 1, 2, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
