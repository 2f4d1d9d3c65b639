/**
 * The ownership lease every task obeys before it issues an ID, in every mode: {@code PartitionLease}
 * (pure: who owns a partition by the epochs in its changelog, and whether this task may issue now),
 * {@code LeaseVerifier} (one thread per stamper that takes each task's lease in the changelog and
 * reads the changelog back, confirming or revoking every lease it holds), {@code LeaseGuard} (the check
 * a task makes before each ID) and {@code Leases} (what a topology is given). The argument is in
 * design.md, "The ownership lease". Uses Kafka's clients only; no other snowstamp package.
 */
package io.snowstamp.lease;
