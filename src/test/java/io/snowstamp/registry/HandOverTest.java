package io.snowstamp.registry;

import io.snowstamp.config.ConfigException;
import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ResumePlan;
import io.snowstamp.state.WorkerState;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HandOverTest {
    private static final IdLayout SNOWFLAKE = IdLayout.preset("snowflake");
    private static final String REGISTRY = "reg-1";
    private static final long NOW = 1_800_000_000_000L;
    private static final Duration STALE_AFTER = Duration.ofMinutes(1);

    private static Claim claim(String app, long first, int count, long heartbeatAt, String note) {
        return new Claim("default", 0, app, first, count, SNOWFLAKE.fingerprint(), "events.raw", "events.stamped", "host-a", 1000,
                heartbeatAt, Claim.State.ACTIVE, -1, REGISTRY, null, note);
    }

    private static Claim stopped(String app, long first, int count) {
        return claim(app, first, count, NOW - 3_600_000, WorkerRegistry.STOPPED_NOTE);
    }

    private static RegistryView view(Claim... claims) {
        List<RegistryView.Entry> log = new ArrayList<>();
        for (Claim claim : claims) {
            log.add(new RegistryView.Entry(log.size(), 0, claim));
        }
        return new RegistryView(log, REGISTRY);
    }

    private static HandOver.Request request(String source, String target, long offset, boolean force) {
        return new HandOver.Request("default", 0, source, target, SNOWFLAKE, offset, 4, "events.stamped", NOW, STALE_AFTER, force);
    }

    @Test
    void shouldHandTheSourcesWholeRangeOverToANewApplicationId() {
        RegistryView view = view(stopped("snowstamp", 0, 4), stopped("other", 4, 2));
        HandOver plan = HandOver.plan(view, request("snowstamp", "snowstamp-moved", 0, false));
        assertThat(plan.kind()).isEqualTo(HandOver.Kind.HAND_OVER);
        assertThat(plan.firstWorker()).isZero();
        assertThat(plan.count()).isEqualTo(4);
        assertThat(plan.released()).extracting(v -> v.claim().application()).containsExactly("snowstamp");
        assertThat(plan.describe("snowstamp-workers", false)).isEqualTo("worker registry snowstamp-workers: --apply hands workers 0..3"
                + " (ID space default, datacenter 0) over from snowstamp to snowstamp-moved: snowstamp's claim (stopped cleanly) is"
                + " released with the resume points above as marks, and the workers are claimed for snowstamp-moved, which joins that"
                + " claim when it starts");
        assertThat(plan.describe("snowstamp-workers", true)).isEqualTo("worker registry snowstamp-workers: handed workers 0..3"
                + " (ID space default, datacenter 0) over from snowstamp to snowstamp-moved: snowstamp's claim (stopped cleanly) released"
                + " with the resume points above as marks, and the workers claimed for snowstamp-moved, which joins that claim when it"
                + " starts");
    }

    @Test
    void shouldTakeTheWorkersFromTheSourcesClaimWithAutoAndRefuseAFixedOffsetThatDisagrees() {
        RegistryView view = view(stopped("a", 8, 2), claim("a", 10, 2, NOW - 3_600_000, WorkerRegistry.STOPPED_NOTE));
        HandOver auto = HandOver.plan(view, request("a", "b", -1, false));
        assertThat(auto.firstWorker()).isEqualTo(8);
        assertThat(auto.count()).as("an extended claim moves whole").isEqualTo(4);
        assertThat(auto.released()).hasSize(2);
        assertThat(HandOver.plan(view, request("a", "a", -1, false)).kind()).isEqualTo(HandOver.Kind.KEEP);
        assertThatThrownBy(() -> HandOver.plan(view, request("a", "b", 0, false))).isInstanceOf(ConfigException.class)
                .hasMessage("id.worker-offset=0 is invalid: accepted 8 or auto (application a holds workers 8..11 in ID space default"
                        + " of the worker registry)");
        assertThatThrownBy(() -> HandOver.plan(view(), request("a", "b", -1, false))).isInstanceOf(ConfigException.class)
                .hasMessage("id.worker-offset=auto is invalid: accepted the offset application a ran with (it holds no claim in ID space"
                        + " default of the worker registry, so auto cannot tell)");
        HandOver.Request otherLayout = new HandOver.Request("default", 0, "a", "b", IdLayout.preset("sonyflake"), -1, 4, "events.stamped",
                NOW, STALE_AFTER, false);
        assertThatThrownBy(() -> HandOver.plan(view, otherLayout)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("the id.* settings give layout " + IdLayout.preset("sonyflake").fingerprint())
                .hasMessageEndingWith("set the id.* keys it ran with");
    }

    @Test
    void shouldRefuseWhileTheSourceMayStillRunAndHandOverAStaleClaimOnlyWithForce() {
        RegistryView running = view(claim("a", 0, 4, NOW - 5_000, ""));
        HandOver refused = HandOver.plan(running, request("a", "b", 0, true));
        assertThat(refused.kind()).isEqualTo(HandOver.Kind.REFUSED);
        assertThat(refused.refusal()).startsWith("application a did not record a clean stop and its last heartbeat was 5 s ago")
                .endsWith("stop it, or wait until the claim is stale (registry.stale-after=1m) and use --force");

        RegistryView crashed = view(claim("a", 0, 4, NOW - 120_000, ""));
        HandOver withoutForce = HandOver.plan(crashed, request("a", "b", 0, false));
        assertThat(withoutForce.kind()).isEqualTo(HandOver.Kind.REFUSED);
        assertThat(withoutForce.describe("reg", false)).isEqualTo("worker registry reg: --apply would refuse: the claim of application a"
                + " is stale (no heartbeat for 120 s, no clean stop: crashed or frozen): check that no instance of it runs anywhere,"
                + " then hand it over with --force");
        HandOver forced = HandOver.plan(crashed, request("a", "b", 0, true));
        assertThat(forced.kind()).isEqualTo(HandOver.Kind.HAND_OVER);
        assertThat(forced.describe("reg", false)).contains("a's claim (stale, --force) is released");
    }

    @Test
    void shouldRefuseATargetHoldingOtherWorkersAndAcceptOneThatAlreadyTookThem() {
        HandOver taken = HandOver.plan(view(stopped("a", 0, 4), stopped("b", 4, 4)), request("a", "b", 0, false));
        assertThat(taken.kind()).isEqualTo(HandOver.Kind.REFUSED);
        assertThat(taken.refusal()).isEqualTo("application b already holds workers 4..7 in ID space default while a holds workers 0..3:"
                + " a new application id takes over the old one's workers; if b never stamped, release its range with"
                + " 'snowstamp workers release --application-id b --apply' and recover again");

        Claim released = stopped("a", 0, 4).withState(Claim.State.RELEASED, NOW, 0, REGISTRY, new TreeMap<>(Map.of(0L, 5L)), "handed");
        HandOver again = HandOver.plan(view(stopped("a", 0, 4), released, stopped("b", 0, 4)), request("a", "b", 0, false));
        assertThat(again.kind()).as("recover run again after a hand-over").isEqualTo(HandOver.Kind.HELD);
        assertThat(again.describe("reg", true)).isEqualTo("worker registry reg: unchanged (b already holds workers 0..3 (ID space default,"
                + " datacenter 0))");
    }

    @Test
    void shouldClaimFreeWorkersForTheTargetWhenTheSourceHoldsNoneAndRefuseWorkersOfAThirdApplication() {
        HandOver free = HandOver.plan(view(stopped("c", 4, 4)), request("a", "b", 0, false));
        assertThat(free.kind()).isEqualTo(HandOver.Kind.CLAIM);
        assertThat(free.describe("reg", false)).isEqualTo("worker registry reg: --apply claims workers 0..3 (ID space default,"
                + " datacenter 0) for b (a holds no claim), which joins that claim when it starts");
        HandOver held = HandOver.plan(view(stopped("c", 2, 4)), request("a", "b", 0, false));
        assertThat(held.kind()).isEqualTo(HandOver.Kind.REFUSED);
        assertThat(held.refusal()).startsWith("workers 0..3 are held by application c (workers 2..5, last heartbeat ")
                .endsWith("not by a: check --from-changelog and id.worker-offset (the offset a ran with)");
        assertThat(HandOver.plan(view(), request("a", "a", 0, false)).describe("reg", false))
                .isEqualTo("worker registry reg: unchanged (a holds no claim: it claims workers 0..3 (ID space default, datacenter 0)"
                        + " when it starts)");
    }

    @Test
    void shouldRefuseAHandOverWhoseMarksWouldNotCoverTheSourcesOutput() {
        HandOver.Request mirrored = new HandOver.Request("default", 0, "a", "b", SNOWFLAKE, 0, 4, "old.events.stamped", NOW, STALE_AFTER,
                false);
        HandOver plan = HandOver.plan(view(stopped("a", 0, 4)), mirrored);
        assertThat(plan.kind()).isEqualTo(HandOver.Kind.REFUSED);
        assertThat(plan.refusal()).isEqualTo("application a wrote to events.stamped (its claim in the worker registry says so) but"
                + " --from-output is old.events.stamped: the marks handed over must cover what it wrote; use --from-output events.stamped");
    }

    @Test
    void shouldMarkEveryWorkerWithTheHigherOfItsResumePointAndAnInheritedMark() {
        Claim inherited = new Claim("default", 0, "a", 0, 4, SNOWFLAKE.fingerprint(), "events.raw", "events.stamped", "h", 1000,
                NOW - 3_600_000, Claim.State.ACTIVE, -1, REGISTRY, new TreeMap<>(Map.of(1L, 900L, 2L, 50L)), WorkerRegistry.STOPPED_NOTE);
        RegistryView view = view(inherited);
        HandOver plan = HandOver.plan(view, request("a", "b", 0, false));
        Map<Integer, WorkerState> changelog = Map.of(0, state(0, 100), 1, state(1, 200));
        ResumePlan resume = ResumePlan.plan(4, changelog, Map.of(0, 150L, 2, 300L), Map.of(), SNOWFLAKE, 0, NOW);
        assertThat(plan.marks(resume, view)).containsExactly(Map.entry(0L, 150L), Map.entry(1L, 900L), Map.entry(2L, 300L),
                Map.entry(3L, -1L));
    }

    private static WorkerState state(long worker, long mark) {
        return new WorkerState(SNOWFLAKE.fingerprint(), worker, 1, "host-a", 1000, 1000, mark, mark);
    }
}
