package io.snowstamp.registry;

import io.snowstamp.id.IdLayout;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RegistryViewTest {
    private static final String LAYOUT = IdLayout.preset("snowflake").fingerprint();
    private static final String REGISTRY = "reg-1";

    private static Claim claim(String app, long first, int count) {
        return new Claim("default", 0, app, first, count, LAYOUT, "in", "out", "i", 1000, 1000, Claim.State.ACTIVE, -1, REGISTRY,
                null, "");
    }

    @Test
    void shouldGrantTheEarliestOfTwoOverlappingClaimsAndKeepItAfterCompaction() {
        List<RegistryView.Entry> log = new ArrayList<>();
        log.add(new RegistryView.Entry(0, 0, claim("a", 0, 4)));
        log.add(new RegistryView.Entry(1, 0, claim("b", 2, 4)));
        // a's heartbeat carries its first offset; compaction then drops a's first record
        log.add(new RegistryView.Entry(2, 0, claim("a", 0, 4).withHeartbeat(2000, 0, REGISTRY)));
        RegistryView view = new RegistryView(log, REGISTRY);
        assertThat(view.heldBy("default", "a")).hasSize(1);
        assertThat(view.heldBy("default", "b")).isEmpty();

        RegistryView compacted = new RegistryView(List.of(log.get(1), log.get(2)), REGISTRY);
        assertThat(compacted.heldBy("default", "a")).as("the carried first offset keeps a ahead of b").hasSize(1);
        assertThat(compacted.heldBy("default", "b")).isEmpty();
        assertThat(compacted.verdict(claim("b", 2, 4).key()).orElseThrow().blockedBy().application()).isEqualTo("a");
    }

    @Test
    void shouldVoidFirstOffsetsOfAnotherRegistryIncarnation() {
        // a heartbeat written into a recreated registry with the old incarnation's offset 0 does not jump the queue
        List<RegistryView.Entry> log = List.of(
                new RegistryView.Entry(0, 0, claim("b", 0, 2)),
                new RegistryView.Entry(1, 0, claim("a", 0, 2).withHeartbeat(2000, 0, "reg-old")));
        RegistryView view = new RegistryView(log, REGISTRY);
        assertThat(view.heldBy("default", "b")).hasSize(1);
        assertThat(view.heldBy("default", "a")).isEmpty();
    }

    @Test
    void shouldKeepTheEarlierPlaceWhenTwoInstancesOfOneApplicationBothWriteAFirstRecord() {
        List<RegistryView.Entry> log = List.of(
                new RegistryView.Entry(10, 0, claim("a", 0, 2)),
                new RegistryView.Entry(11, 0, claim("c", 0, 2)),
                new RegistryView.Entry(12, 0, claim("a", 0, 2)));
        RegistryView view = new RegistryView(log, REGISTRY);
        assertThat(view.heldBy("default", "a")).hasSize(1);
        assertThat(view.heldBy("default", "c")).isEmpty();
    }

    @Test
    void shouldSeparateSpacesAndDatacentersButNotLayouts() {
        Claim otherSpace = new Claim("other", 0, "b", 0, 4, LAYOUT, "in", "out", "i", 0, 0, Claim.State.ACTIVE, -1, REGISTRY, null, "");
        Claim otherDc = new Claim("default", 1, "c", 0, 4, LAYOUT, "in", "out", "i", 0, 0, Claim.State.ACTIVE, -1, REGISTRY, null, "");
        Claim otherLayout = new Claim("default", 0, "d", 100, 4, IdLayout.preset("sonyflake").fingerprint(), "in", "out", "i", 0, 0,
                Claim.State.ACTIVE, -1, REGISTRY, null, "");
        RegistryView view = new RegistryView(List.of(new RegistryView.Entry(0, 0, claim("a", 0, 4)),
                new RegistryView.Entry(1, 0, otherSpace), new RegistryView.Entry(2, 0, otherDc), new RegistryView.Entry(3, 0, otherLayout)), REGISTRY);
        assertThat(view.verdicts()).extracting(RegistryView.Verdict::granted).containsExactly(true, true, true, false);
    }

    @Test
    void shouldFindTheLowestFreeRangeAndTheMarksOfReleasedClaims() {
        Claim released = claim("old", 4, 2).withState(Claim.State.RELEASED, 3000, 1, REGISTRY, new TreeMap<>(Map.of(4L, 400L, 5L, -1L)), "");
        RegistryView view = new RegistryView(List.of(new RegistryView.Entry(0, 0, claim("a", 0, 4)),
                new RegistryView.Entry(1, 0, claim("b", 6, 2)), new RegistryView.Entry(2, 0, released)), REGISTRY);
        assertThat(view.firstFree("default", 0, "new", 2, 1023, List.of())).isEqualTo(4);
        assertThat(view.firstFree("default", 0, "new", 3, 1023, List.of())).isEqualTo(8);
        assertThat(view.firstFree("default", 0, "a", 4, 1023, List.of())).as("its own claim does not block an application").isZero();
        assertThat(view.firstFree("default", 0, "new", 3, 9, List.of())).isEqualTo(-1);
        assertThat(view.markOf("default", 0, 4)).isEqualTo(400);
        assertThat(view.markOf("default", 0, 5)).isEqualTo(-1);
        assertThat(view.markOf("default", 1, 4)).isEqualTo(-1);

        // the old owner claims its range again under the same key: the marks it inherited stay
        Claim again = new Claim("default", 0, "old", 4, 2, LAYOUT, "in", "out", "i", 4000, 4000, Claim.State.ACTIVE, -1, REGISTRY,
                new TreeMap<>(Map.of(4L, 400L)), "");
        RegistryView reclaimed = new RegistryView(List.of(new RegistryView.Entry(2, 0, released), new RegistryView.Entry(3, 0, again)),
                REGISTRY);
        assertThat(reclaimed.markOf("default", 0, 4)).isEqualTo(400);
    }

    /**
     * A holder's heartbeat read before a release and written after it (found by CI: the running
     * stamper's claim released by the test came back to life and the stamper never stopped) neither
     * revives the claim nor moves a newcomer that claimed the workers in between behind it.
     */
    @Test
    void shouldKeepAReleasedClaimReleasedWhenAHeartbeatReadBeforeTheReleaseLandsAfterIt() {
        Claim held = claim("old", 4, 2);
        Claim released = held.withState(Claim.State.RELEASED, 3000, 0, REGISTRY, new TreeMap<>(Map.of(4L, 400L, 5L, -1L)), "by the test");
        Claim newcomer = claim("new", 4, 2);
        Claim lateBeat = held.withHeartbeat(3500, 0, REGISTRY);
        RegistryView view = new RegistryView(List.of(new RegistryView.Entry(0, 0, held), new RegistryView.Entry(1, 0, released),
                new RegistryView.Entry(2, 0, newcomer), new RegistryView.Entry(3, 0, lateBeat)), REGISTRY);
        assertThat(view.verdict(held.key())).as("the late heartbeat does not revive the claim").isEmpty();
        assertThat(view.inactive()).extracting(e -> e.claim().note()).containsExactly("by the test");
        assertThat(view.releaseOverwritten(held.key())).isTrue();
        assertThat(view.verdict(newcomer.key()).orElseThrow().granted()).as("the newcomer keeps the workers").isTrue();

        // the holder writes the release again: the flag clears; a claim made afresh under the key is active again
        RegistryView repaired = new RegistryView(List.of(new RegistryView.Entry(1, 0, released), new RegistryView.Entry(3, 0, lateBeat),
                new RegistryView.Entry(4, 0, released)), REGISTRY);
        assertThat(repaired.releaseOverwritten(held.key())).isFalse();
        assertThat(repaired.verdict(held.key())).isEmpty();
        RegistryView again = new RegistryView(List.of(new RegistryView.Entry(1, 0, released), new RegistryView.Entry(5, 0, held)), REGISTRY);
        assertThat(again.verdict(held.key()).orElseThrow().granted()).as("a fresh claim (no carried place)").isTrue();
    }

    @Test
    void shouldRoundTripTheRecordFormatAndRefuseNewerVersions() {
        Claim original = claim("a", 3, 2).withState(Claim.State.RELEASED, 5000, 7, REGISTRY, new TreeMap<>(Map.of(3L, 99L)), "note");
        assertThat(ClaimCodec.decode(ClaimCodec.encode(original))).isEqualTo(original);
        assertThat(new String(ClaimCodec.encode(original), java.nio.charset.StandardCharsets.UTF_8))
                .startsWith("{\"version\":1,\"space\":\"default\",\"datacenter\":0,\"application\":\"a\",\"firstWorker\":3,\"count\":2,");
        assertThatThrownBy(() -> ClaimCodec.decode("{\"version\":2}".getBytes())).hasMessageContaining("version 2 is not supported");
        assertThatThrownBy(() -> ClaimCodec.decode("nope".getBytes())).hasMessageContaining("not JSON");
    }

    /** id-spaces.md: "Readers ignore unknown fields": a record of a later writer of version 1 with a field added still reads. */
    @Test
    void shouldIgnoreUnknownFieldsOfTheSameVersion() {
        Claim original = claim("a", 3, 2);
        String json = new String(ClaimCodec.encode(original), java.nio.charset.StandardCharsets.UTF_8);
        String extended = json.substring(0, json.length() - 1) + ",\"addedLater\":{\"nested\":[1,2]},\"flag\":true}";
        assertThat(ClaimCodec.decode(extended.getBytes(java.nio.charset.StandardCharsets.UTF_8))).isEqualTo(original);
    }
}
