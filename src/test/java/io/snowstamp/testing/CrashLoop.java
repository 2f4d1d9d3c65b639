package io.snowstamp.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * SIGKILLs one stamper instance again and again, restarting it each time on the same state
 * directory and instance id. Kills alternate between two kinds of moment:
 * <ul>
 *   <li>odd kills: 0.2–3 s after the instance said it started, mostly while it waits for its
 *       partitions, restores its state, or stamps its first records;</li>
 *   <li>even kills: once the output topic has grown (the instance is stamping, a transaction is
 *       likely open), after a further 0–1.5 s.</li>
 * </ul>
 * Moments come from a seeded {@link Random}: print the seed to replay a run.
 */
public final class CrashLoop {
    private final Stamper stamper;
    private final Random random;
    private final Timeline timeline;
    private final List<String> refusals = new ArrayList<>();

    public CrashLoop(Stamper stamper, Random random, Timeline timeline) {
        this.stamper = stamper;
        this.random = random;
        this.timeline = timeline;
    }

    /**
     * Kills {@code running} and restarts it {@code kills} times; returns the last, running instance.
     * An even kill whose instance writes nothing within 60 s kills it anyway (and says so).
     */
    public ChildJvm run(ChildJvm running, int kills) throws Exception {
        ChildJvm current = running;
        try (TopicEnds ends = new TopicEnds(stamper.bootstrapServers())) {
            for (int kill = 1; kill <= kills; kill++) {
                if (kill % 2 == 1) {
                    Thread.sleep(200 + random.nextInt(2_800));
                } else {
                    long before = ends.total(stamper.topics().out());
                    if (!ends.awaitAbove(stamper.topics().out(), before, Duration.ofSeconds(60))) {
                        timeline.mark("kill %d: no output within 60 s, killing anyway", kill);
                    }
                    Thread.sleep(random.nextInt(1_500));
                }
                current.kill();
                timeline.mark("kill %d (%s)", kill, kill % 2 == 1 ? "early" : "while stamping");
                current = stamper.restartAfterCrash(refusal -> {
                    refusals.add(refusal);
                    timeline.mark("restart refused, local state deleted: %s", refusal);
                });
            }
        } catch (Exception | AssertionError e) {
            current.close();
            throw e;
        }
        return current;
    }

    /**
     * Starts that Kafka Streams refused (see {@link Stamper#restartAfterCrash}) and that were
     * retried after deleting the local state.
     */
    public List<String> refusals() {
        return List.copyOf(refusals);
    }
}
