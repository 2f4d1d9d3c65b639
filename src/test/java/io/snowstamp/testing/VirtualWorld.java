package io.snowstamp.testing;

import io.snowstamp.lease.Ticker;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.Semaphore;

/**
 * A deterministic discrete-event world for model tests of code that reads a monotonic clock and parks: virtual time,
 * events run in time order on the test's thread, and actors — real threads running the real code — of which exactly
 * one runs at a time, handing control back whenever they {@link Ticker#park}. Given the same seed, the same schedule.
 *
 * <p>Each actor has its own monotonic clock: {@code offset + rate * now}, so two actors' clocks can run at different
 * rates. Everything the actors and the events touch is touched by one thread at a time (the baton is a semaphore
 * hand-off, which also orders their memory).
 */
public final class VirtualWorld {

    private record Event(long at, long seq, Runnable action) {
    }

    /** Unwinds an actor's thread when the world ends. */
    private static final class Ended extends Error {
        Ended() {
            super(null, null, false, false);
        }
    }

    private final PriorityQueue<Event> events = new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at)
            : Long.compare(a.seq, b.seq));
    private final Semaphore scheduler = new Semaphore(0);
    private final List<Actor> actors = new ArrayList<>();
    private long now;
    private long seq;
    private volatile boolean ended;

    /** Virtual nanoseconds since the world began. */
    public long now() {
        return now;
    }

    /** Runs {@code action} on the scheduler at virtual time {@code at} (not before now). */
    public void at(long at, Runnable action) {
        events.add(new Event(Math.max(at, now), seq++, action));
    }

    /** Runs events in time order until none is left before {@code until}. Then every actor is ended. */
    public void runUntil(long until) {
        while (!events.isEmpty() && events.peek().at <= until) {
            Event next = events.poll();
            now = next.at;
            next.action.run();
        }
        ended = true;
        for (Actor actor : actors) {
            actor.go.release();
        }
        for (Actor actor : actors) {
            try {
                actor.thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** An actor whose monotonic clock reads {@code offsetNanos + rate * now}. */
    public Actor actor(String name, double rate, long offsetNanos) {
        Actor actor = new Actor(name, rate, offsetNanos);
        actors.add(actor);
        return actor;
    }

    /** A thread of the world, with a clock of its own; runs only while the scheduler waits for it. */
    public final class Actor implements Ticker {
        private final String name;
        private final double rate;
        private final long offset;
        private final Semaphore go = new Semaphore(0);
        private Thread thread;
        private Throwable failure;

        private Actor(String name, double rate, long offset) {
            this.name = name;
            this.rate = rate;
            this.offset = offset;
        }

        /** Starts {@code body} on this actor's thread at virtual time {@code at}. */
        public void start(long at, Runnable body) {
            at(at, () -> {
                thread = new Thread(() -> {
                    try {
                        go.acquireUninterruptibly();
                        if (!ended) {
                            body.run();
                        }
                    } catch (Ended e) {
                        // the world ended while this actor waited
                    } catch (Throwable t) {
                        failure = t;
                    } finally {
                        scheduler.release();
                    }
                }, "actor-" + name);
                thread.setDaemon(true);
                thread.start();
                handOver();
            });
        }

        /** What ended the actor's body with a throw (null: none, or it still runs). */
        public Throwable failure() {
            return failure;
        }

        @Override
        public long nanoTime() {
            return offset + (long) (rate * now);
        }

        /** Waits {@code nanos} of this actor's clock: the world goes on meanwhile. */
        @Override
        public void park(long nanos) {
            long virtual = Math.max(1, (long) Math.ceil(Math.max(0, nanos) / rate));
            at(now + virtual, this::handOver);
            scheduler.release();
            go.acquireUninterruptibly();
            if (ended) {
                throw new Ended();
            }
        }

        /** Scheduler side: lets this actor run until it parks or ends. */
        private void handOver() {
            go.release();
            scheduler.acquireUninterruptibly();
        }
    }
}
