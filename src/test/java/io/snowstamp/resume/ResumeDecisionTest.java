package io.snowstamp.resume;

import io.snowstamp.id.IdLayout;
import io.snowstamp.state.WorkerState;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class ResumeDecisionTest {
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");
    private static final long NOW = Instant.parse("2026-06-01T00:00:00Z").toEpochMilli();
    private static final long WORKER = 3;

    private static long idAt(long wallMillis, long sequence) {
        return LAYOUT.encode(LAYOUT.unitsSinceEpoch(wallMillis), 0, WORKER, sequence);
    }

    private static WorkerState state(long lastId, long reservedUntil) {
        return new WorkerState(LAYOUT.fingerprint(), WORKER, 4, "old/thread", NOW - 60_000, NOW - 5_000, lastId, reservedUntil);
    }

    private static TailProbe.Result tail(long id) {
        return new TailProbe.Result(id, 10, 90, 100, 3);
    }

    @Test
    void shouldStartFromTheClockWhenNothingWasIssued() {
        ResumeDecision decision = ResumeDecision.decide(LAYOUT, 0, WORKER, WorkerState.initial(LAYOUT.fingerprint(), WORKER),
                TailProbe.Result.NONE, NOW, 0);
        assertThat(decision.resumeAbove()).isEqualTo(-1);
        assertThat(decision.source()).isEqualTo("clock");
        assertThat(decision.describe(LAYOUT)).contains("resume above nothing (first start)", "tail=off", "clock=2026-06-01T00:00:00Z");
    }

    @Test
    void shouldLeaveTheReservationOutWhereTheOutputTailDecides() {
        long last = idAt(NOW + 5_000, 7);
        long reserved = idAt(NOW + 15_000, LAYOUT.maxSequence());
        long tailId = idAt(NOW + 6_000, 1);

        ResumeDecision decision = ResumeDecision.decide(LAYOUT, 0, WORKER, state(last, reserved), tail(tailId), -1, NOW, 0, false);
        assertThat(decision.resumeAbove()).isEqualTo(tailId);
        assertThat(decision.source()).isEqualTo("tail");
        assertThat(decision.describe(LAYOUT)).contains("from tail = max(state.lastId=", "is no bound here: the committed output tail decides")
                .doesNotContain(", state.reservedUntil=");
    }

    @Test
    void shouldResumeAboveTheHighestOfStateAndTailWhenTheyLeadTheClock() {
        long last = idAt(NOW + 5_000, 7);
        long reserved = idAt(NOW + 6_000, LAYOUT.maxSequence());
        long tailId = idAt(NOW + 9_000, 1);

        ResumeDecision byTail = ResumeDecision.decide(LAYOUT, 0, WORKER, state(last, reserved), tail(tailId), NOW, 0);
        assertThat(byTail.resumeAbove()).isEqualTo(tailId);
        assertThat(byTail.source()).isEqualTo("tail");

        ResumeDecision byReservation = ResumeDecision.decide(LAYOUT, 0, WORKER, state(last, reserved), tail(last), NOW, 0);
        assertThat(byReservation.resumeAbove()).isEqualTo(reserved);
        assertThat(byReservation.source()).isEqualTo("state.reservedUntil");

        ResumeDecision byLastId = ResumeDecision.decide(LAYOUT, 0, WORKER, state(last, -1), TailProbe.Result.NONE, NOW, 0);
        assertThat(byLastId.resumeAbove()).isEqualTo(last);
        assertThat(byLastId.source()).isEqualTo("state.lastId");
        assertThat(byLastId.describe(LAYOUT)).contains("from state.lastId", "state.reservedUntil=none", "tail=off");
    }

    /**
     * README and id-spaces.md: the worker registry's mark (a released claim's highest ID for the worker, maybe another
     * application's in another output topic) is the fifth input of the max, named {@code registry=} in the line.
     */
    @Test
    void shouldResumeAboveTheRegistryMarkWhenItLeadsStateTailAndClock() {
        long last = idAt(NOW + 5_000, 7);
        long reserved = idAt(NOW + 6_000, LAYOUT.maxSequence());
        long tailId = idAt(NOW + 9_000, 1);
        long mark = idAt(NOW + 3_600_000, 3);       // issued by an application whose clock ran an hour ahead of this one

        ResumeDecision decision = ResumeDecision.decide(LAYOUT, 0, WORKER, state(last, reserved), tail(tailId), mark, NOW, 0);
        assertThat(decision.resumeAbove()).isEqualTo(mark);
        assertThat(decision.source()).isEqualTo("registry");
        assertThat(decision.describe(LAYOUT)).contains("from registry", "registry=" + mark + " (");

        ResumeDecision below = ResumeDecision.decide(LAYOUT, 0, WORKER, state(last, reserved), tail(tailId), idAt(NOW + 1_000, 0), NOW, 0);
        assertThat(below.source()).as("a mark below the tail decides nothing").isEqualTo("tail");
    }

    @Test
    void shouldNameTheClockButKeepTheHighWaterMarkWhenTheClockIsAhead() {
        long old = idAt(NOW - 60_000, 5);
        ResumeDecision decision = ResumeDecision.decide(LAYOUT, 0, WORKER, state(old, old), tail(old), NOW, 0);
        assertThat(decision.source()).isEqualTo("clock");
        // the mark still bounds the generator in case the clock steps back before the first ID
        assertThat(decision.resumeAbove()).isEqualTo(old);
    }

    @Test
    void shouldAddTheTakeoverGapAboveTheClockOrTheMark() {
        ResumeDecision fromClock = ResumeDecision.decide(LAYOUT, 0, WORKER, WorkerState.initial(LAYOUT.fingerprint(), WORKER),
                TailProbe.Result.NONE, NOW, 1_000);
        assertThat(fromClock.resumeAbove()).isEqualTo(idAt(NOW + 1_000, LAYOUT.maxSequence()));
        assertThat(fromClock.source()).isEqualTo("clock+gap");

        long ahead = idAt(NOW + 4_000, 2);
        ResumeDecision fromTail = ResumeDecision.decide(LAYOUT, 0, WORKER, state(-1, -1), tail(ahead), NOW, 1_000);
        assertThat(fromTail.resumeAbove()).isEqualTo(idAt(NOW + 5_000, LAYOUT.maxSequence()));
        assertThat(fromTail.source()).isEqualTo("tail+gap");
        assertThat(fromTail.describe(LAYOUT)).endsWith("+ takeover gap 1000 ms");
    }

    @Test
    void shouldRoundAGapUpToWholeTimeUnits() {
        IdLayout tenMs = IdLayout.preset("sonyflake");
        ResumeDecision decision = ResumeDecision.decide(tenMs, 0, 1, WorkerState.initial(tenMs.fingerprint(), 1),
                TailProbe.Result.NONE, NOW, 15);
        assertThat(tenMs.decode(decision.resumeAbove()).time()).isEqualTo(tenMs.unitsSinceEpoch(NOW) + 2);
    }
}
