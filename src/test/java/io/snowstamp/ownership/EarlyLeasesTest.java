package io.snowstamp.ownership;

import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.Leases;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lease taken when a task's restore ends is the lease its start would have taken, and it is used only
 * by that start: adopted when the start finds the very state the lease was computed from on the thread
 * the lease names; released when it does not, when the task closes first, or when a later restore of the
 * partition takes another.
 */
class EarlyLeasesTest {
    private static final String FINGERPRINT = "layout-1";
    private static final String CHANGELOG = "app-worker-state-changelog";
    private static final long NOW = 1_800_000_000_000L;

    /** One lease taken through {@link Leases#take}. */
    private record Take(TaskId task, TopicPartition changelog, LeaseMark mark, WorkerState value, boolean restoreAgain,
                        AtomicInteger releases) {
    }

    private final List<Take> takes = new ArrayList<>();
    private final Leases leases = (task, changelog, mine, key, value, name, restoreAgain) -> {
        AtomicInteger releases = new AtomicInteger();
        takes.add(new Take(task, changelog, mine, new WorkerStateSerde().deserializer().deserialize(changelog.topic(), value),
                restoreAgain, releases));
        return LeaseGuard.unchecked(releases::incrementAndGet);
    };
    private final EarlyLeases early = new EarlyLeases(leases, CHANGELOG, "inst", FINGERPRINT, partition -> partition + 100L, () -> NOW);
    private final Map<Integer, WorkerState> store = new HashMap<>();
    private final Object storeInstance = new Object();

    private static WorkerState held(long epoch, String holder) {
        return new WorkerState(FINGERPRINT, 103, epoch, holder, NOW - 60_000, NOW - 5_000, 4242, 5000);
    }

    private String thisThread() {
        return io.snowstamp.lease.Holders.of("inst");
    }

    private void open(int partition, Object instance) {
        early.opened(partition, instance, new TaskId(0, partition), store::get);
    }

    @Test
    void shouldTakeTheNextEpochWhenTheRestoreEndsAndHandItToTheTasksStart() {
        WorkerState restored = held(4, "old/StreamThread-1");
        store.put(3, restored);
        open(3, storeInstance);

        early.restored(3);

        assertThat(takes).hasSize(1);
        Take take = takes.get(0);
        WorkerState written = restored.withNewLease(thisThread(), NOW).withWrittenAt(NOW);
        assertThat(take.value()).isEqualTo(written);
        assertThat(take.mark()).isEqualTo(new LeaseMark(5, thisThread()));
        assertThat(take.changelog()).isEqualTo(new TopicPartition(CHANGELOG, 3));
        assertThat(take.task()).isEqualTo(new TaskId(0, 3));
        assertThat(take.restoreAgain()).as("another writer after the restore sends the task back to restore").isTrue();

        EarlyLeases.Taken adopted = early.adopt(3, restored, thisThread());
        assertThat(adopted).isNotNull();
        assertThat(adopted.state()).isEqualTo(written);
        assertThat(adopted.guard()).isNotNull();
        assertThat(early.adopt(3, restored, thisThread())).as("adopted once").isNull();
        early.closed(3, storeInstance);
        assertThat(take.releases()).as("the task's own guard is the task's to release").hasValue(0);
        assertThat(early.stats()).isEqualTo(new EarlyLeases.Stats(1, 1, 0));
    }

    @Test
    void shouldReleaseTheLeaseWhenTheStartFindsAnotherStateOrRunsOnAnotherThread() {
        WorkerState restored = held(4, "old/StreamThread-1");
        store.put(1, restored);
        store.put(2, restored);
        open(1, storeInstance);
        open(2, storeInstance);
        early.restored(1);
        early.restored(2);

        assertThat(early.adopt(1, restored.withLastId(4243), thisThread())).isNull();
        assertThat(early.adopt(2, restored, io.snowstamp.lease.Holders.of("inst").replace("/main", "/another-thread"))).isNull();

        assertThat(takes).extracting(t -> t.releases().get()).containsExactly(1, 1);
        assertThat(early.stats()).isEqualTo(new EarlyLeases.Stats(2, 0, 2));
    }

    @Test
    void shouldReleaseALeaseNeverAdoptedWhenItsStoreLetsGoOfTheTask() {
        WorkerState restored = held(4, "old/StreamThread-1");
        store.put(7, restored);
        Object newer = new Object();
        open(7, storeInstance);
        early.restored(7);
        early.closed(7, newer);     // another store of the partition (a task recycled meanwhile): not this lease's
        assertThat(takes.get(0).releases()).hasValue(0);

        early.closed(7, storeInstance);

        assertThat(takes.get(0).releases()).hasValue(1);
        assertThat(early.adopt(7, restored, thisThread())).isNull();
        early.restored(7);
        assertThat(takes).as("a closed store is not restored from").hasSize(1);
    }

    @Test
    void shouldReleaseTheEarlierLeaseWhenThePartitionIsRestoredAgain() {
        store.put(5, held(4, "old/StreamThread-1"));
        open(5, storeInstance);
        early.restored(5);
        WorkerState again = held(5, thisThread());
        store.put(5, again);

        early.restored(5);

        assertThat(takes).hasSize(2);
        assertThat(takes.get(0).releases()).hasValue(1);
        assertThat(takes.get(1).mark()).isEqualTo(new LeaseMark(6, thisThread()));
        assertThat(early.adopt(5, again, thisThread()).state().epoch()).isEqualTo(6);
    }

    @Test
    void shouldLeaveTheLeaseToTheTasksStartWhenTheRestoredStateCannotBeRead() {
        early.opened(4, storeInstance, new TaskId(0, 4), partition -> {
            throw new IllegalStateException("store closed");
        });

        early.restored(4);      // no exception: Kafka Streams would stop the thread

        assertThat(takes).isEmpty();
        assertThat(early.adopt(4, held(4, "old/StreamThread-1"), thisThread())).isNull();
    }

    @Test
    void shouldLeaveAFirstStartAndAnotherLayoutToTheTasksStart() {
        open(1, storeInstance);
        store.put(2, new WorkerState("layout-2", 103, 4, "old/StreamThread-1", NOW, NOW, 1, 1));
        open(2, storeInstance);

        early.restored(1);
        early.restored(2);
        early.restored(9);      // no store opened for it here

        assertThat(takes).isEmpty();
        assertThat(early.adopt(1, WorkerState.initial(FINGERPRINT, 101), thisThread())).isNull();
        assertThat(early.stats()).isEqualTo(new EarlyLeases.Stats(0, 0, 0));
    }
}
