package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnsupportedVersionException;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Who is running an application: the members of its group. A stamper joins as a consumer group
 * (the classic protocol, Kafka Streams 4.3's default) or, with {@code group.protocol=streams}
 * (KIP-1071), as a streams group. Both are asked.
 */
public final class ApplicationGroup {
    private ApplicationGroup() {
    }

    /**
     * The active members of group {@code applicationId}, as {@code client-id@host}; empty when the
     * group does not exist or has no member.
     */
    public static List<String> activeMembers(Admin admin, String applicationId, Duration timeout) {
        try {
            StreamsGroupDescription group = ChangelogWriter.get(
                    admin.describeStreamsGroups(Set.of(applicationId)).describedGroups().get(applicationId), timeout,
                    "describe the streams group " + applicationId);
            if (!group.members().isEmpty()) {
                return group.members().stream().map(m -> m.clientId() + "@" + m.clientHost()).sorted().toList();
            }
        } catch (SnowstampException e) {
            // not a streams group (or no such group), or a broker without streams groups: ask as a consumer group
            if (!(e.getCause() instanceof GroupIdNotFoundException || e.getCause() instanceof UnsupportedVersionException)) {
                throw e;
            }
        }
        try {
            ConsumerGroupDescription group = ChangelogWriter.get(
                    admin.describeConsumerGroups(Set.of(applicationId)).describedGroups().get(applicationId), timeout,
                    "describe the consumer group " + applicationId);
            return group.members().stream().map(m -> m.clientId() + "@" + m.host()).sorted().toList();
        } catch (SnowstampException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return List.of();
            }
            throw e;
        }
    }

    /**
     * Which of {@code applicationIds} may be running: those whose group has members, and those whose
     * group could not be described (counted as running, so a caller waits for them rather than take
     * their workers). One request per group protocol for all of them: a cluster holds many
     * applications, and asking one by one took minutes on a loaded broker.
     */
    public static Set<String> mayBeRunning(Admin admin, Collection<String> applicationIds, Duration timeout) {
        Set<String> running = new TreeSet<>();
        if (applicationIds.isEmpty()) {
            return running;
        }
        Set<String> notStreams = new TreeSet<>();
        Map<String, KafkaFuture<StreamsGroupDescription>> streams = admin.describeStreamsGroups(Set.copyOf(applicationIds)).describedGroups();
        for (String id : applicationIds) {
            try {
                if (!ChangelogWriter.get(streams.get(id), timeout, "describe the streams group " + id).members().isEmpty()) {
                    running.add(id);
                }
            } catch (SnowstampException e) {
                if (e.getCause() instanceof GroupIdNotFoundException || e.getCause() instanceof UnsupportedVersionException) {
                    notStreams.add(id);     // ask as a consumer group
                } else {
                    running.add(id);
                }
            }
        }
        if (notStreams.isEmpty()) {
            return running;
        }
        Map<String, KafkaFuture<ConsumerGroupDescription>> consumers = admin.describeConsumerGroups(notStreams).describedGroups();
        for (String id : notStreams) {
            try {
                if (!ChangelogWriter.get(consumers.get(id), timeout, "describe the consumer group " + id).members().isEmpty()) {
                    running.add(id);
                }
            } catch (SnowstampException e) {
                if (!(e.getCause() instanceof GroupIdNotFoundException)) {
                    running.add(id);
                }
            }
        }
        return running;
    }

    /**
     * Fails when the application has active members: what is written now would be overwritten by
     * their next commit, and they keep issuing IDs above what was read.
     */
    public static void requireStopped(Admin admin, String applicationId, Duration timeout, String action) {
        requireStopped(activeMembers(admin, applicationId, timeout), applicationId, action);
    }

    /** {@link #requireStopped(Admin, String, Duration, String)} with the {@link #activeMembers} already asked for. */
    public static void requireStopped(List<String> members, String applicationId, String action) {
        if (!members.isEmpty()) {
            throw new SnowstampException("application " + applicationId + " is running (" + members.size() + " active member"
                    + (members.size() == 1 ? "" : "s") + ": " + String.join(", ", members) + "): stop every instance before "
                    + action + " (a crashed instance leaves the group after the session timeout)");
        }
    }
}
