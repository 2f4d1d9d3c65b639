/**
 * A task's ownership of its IDs, in both modes: where never-reissue is enforced (design.md, "The
 * ownership lease" and "Why two owners never forward the same ID", names each step). The lease itself
 * is {@code lease/}; everything a task does with it is here:
 * <ul>
 * <li>{@code Issuer} — the order of every ID's steps (wait for a takeover, the lease, the reservation;
 *     issue; check after), and {@code mustWait}, which sets a record aside instead of waiting on the
 *     thread (step (c), and (a)'s resume above {@code highestCovered});</li>
 * <li>{@code WriteAhead} — write-ahead reservations: no ID above the highest reservation acknowledged
 *     and read back ("Write-ahead reservations");</li>
 * <li>{@code ReadPastAcks} — the read-past rule: a write counts once a round that confirmed the lease
 *     read the changelog past its acknowledged offset (step 1 of the argument); shared with
 *     {@code sequence/}'s segments;</li>
 * <li>{@code WriteAcks}, {@code AckWait} — acknowledgement routing from the producer to the task
 *     incarnation that sent the write, and the bounded wait for one;</li>
 * <li>{@code TaskState}, {@code PreCommitStore}, {@code PreCommitHooks} — the task's state writes:
 *     the stored layout checked ({@code LayoutChangedException}), the exact last ID at the commits
 *     that need it;</li>
 * <li>{@code EarlyLeases} — leases taken for restoring tasks before they start;</li>
 * <li>{@code HeartbeatSchedule}, {@code LeadWatch} — the lease's heartbeat and the lead of IDs over
 *     the clock;</li>
 * <li>{@code PredecessorFence} — the previous owner's open transactions fenced before the first ID.</li>
 * </ul>
 * May use lease, state, config and id; used by {@code stream/} and {@code sequence/}.
 */
package io.snowstamp.ownership;
