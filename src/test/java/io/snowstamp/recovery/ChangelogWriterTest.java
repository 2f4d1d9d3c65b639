package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChangelogWriterTest {

    @Test
    void shouldAskAgainWhileABrokerHasNotYetHeardOfTheNewTopic() {
        AtomicInteger asked = new AtomicInteger();
        Admin admin = listing(4, () -> asked.incrementAndGet() <= 3 ? new UnknownTopicOrPartitionException("not yet") : null);

        ChangelogWriter.awaitLeaders(admin, "fresh", 4, Duration.ofSeconds(10));

        assertThat(asked).as("three 'unknown topic' answers, then the leaders").hasValue(4);
    }

    @Test
    void shouldGiveUpOnUnknownTopicAtTheTimeoutAndAtOnceOnAnyOtherError() {
        Admin unknown = listing(2, () -> new UnknownTopicOrPartitionException("never created"));
        assertThatThrownBy(() -> ChangelogWriter.awaitLeaders(unknown, "gone", 2, Duration.ofMillis(300)))
                .isInstanceOf(SnowstampException.class).hasMessageContaining("find the leaders of the partitions of the new topic gone");

        AtomicInteger asked = new AtomicInteger();
        Admin denied = listing(2, () -> {
            asked.incrementAndGet();
            return new TopicAuthorizationException("denied");
        });
        assertThatThrownBy(() -> ChangelogWriter.awaitLeaders(denied, "secret", 2, Duration.ofSeconds(10)))
                .isInstanceOf(SnowstampException.class).hasMessageContaining("denied");
        assertThat(asked).hasValue(1);
    }

    /** An admin client whose {@code listOffsets} fails every partition with what {@code error} gives (null: answers). */
    private static Admin listing(int partitions, Supplier<RuntimeException> error) {
        return (Admin) Proxy.newProxyInstance(Admin.class.getClassLoader(), new Class<?>[]{Admin.class}, (proxy, method, args) -> {
            if (!method.getName().equals("listOffsets")) {
                throw new UnsupportedOperationException(method.getName());
            }
            RuntimeException failure = error.get();
            Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> futures = new HashMap<>();
            for (int p = 0; p < partitions; p++) {
                KafkaFutureImpl<ListOffsetsResult.ListOffsetsResultInfo> future = new KafkaFutureImpl<>();
                if (failure != null) {
                    future.completeExceptionally(failure);
                } else {
                    future.complete(new ListOffsetsResult.ListOffsetsResultInfo(0, -1, Optional.empty()));
                }
                futures.put(new TopicPartition("t", p), future);
            }
            return new ListOffsetsResult(futures);
        });
    }
}
