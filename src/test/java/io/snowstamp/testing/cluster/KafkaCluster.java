package io.snowstamp.testing.cluster;

import io.snowstamp.testing.FreePort;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.apache.kafka.common.utils.Utils;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

/**
 * A replicated Kafka 4.3.1 cluster for fault tests: three KRaft nodes, each broker and controller
 * (static quorum {@code controller.quorum.voters}), each a child JVM of the shaded jar's
 * {@code kafka.Kafka} under a uid of its own in one network namespace of the test's own ({@link Netns}), with the settings
 * of a production cluster: replication factor 3, {@code min.insync.replicas=2}, and Kafka's own
 * defaults otherwise (broker session 9 s, transaction checks every 10 s).
 *
 * <p>Processes inside the namespace reach the nodes at {@link #bootstrapServers()}; so does this
 * JVM, through a {@link LoopbackBridge} on the same ports of its own loopback. The cluster tells which
 * node leads a partition, coordinates a consumer group or a transactional id, and puts partition
 * leaders back where they were created after a node comes back ({@link #electPreferredLeaders}).
 */
public final class KafkaCluster implements AutoCloseable {
    public static final int NODES = 3;
    /** Kafka's default partition counts of its internal topics, unchanged here. */
    public static final int OFFSETS_PARTITIONS = 50;
    public static final int TRANSACTION_STATE_PARTITIONS = 50;

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final Netns netns;
    private final LoopbackBridge bridge;
    private final List<KafkaNode> nodes;
    private final Admin admin;

    private KafkaCluster(Netns netns, LoopbackBridge bridge, List<KafkaNode> nodes, Admin admin) {
        this.netns = netns;
        this.bridge = bridge;
        this.nodes = nodes;
        this.admin = admin;
    }

    /**
     * Creates the namespace, formats and starts the three nodes (data under {@code dir}, logs
     * under {@code logDir}) and waits until they serve clients, with the internal topics for
     * consumer offsets and transactions created and fully replicated.
     */
    public static KafkaCluster start(Path dir, Path logDir) throws Exception {
        Netns netns = Netns.create();
        LoopbackBridge bridge = null;
        List<KafkaNode> nodes = new ArrayList<>();
        try {
            Set<Integer> ports = new HashSet<>();
            while (ports.size() < 2 * NODES) {
                ports.add(FreePort.pick());
            }
            List<Integer> free = new ArrayList<>(ports);
            for (int id = 1; id <= NODES; id++) {
                nodes.add(new KafkaNode(id, free.get(id - 1), free.get(NODES + id - 1), dir.resolve("node-" + id), logDir, netns));
            }
            bridge = LoopbackBridge.open(netns, dir.resolve("bridge"), logDir, nodes.stream().map(KafkaNode::port).toList());
            Properties common = commonConfig(nodes);
            String clusterId = Uuid.randomUuid().toString();
            for (KafkaNode node : nodes) {
                node.writeConfig(common);
                node.format(clusterId);
            }
            for (KafkaNode node : nodes) {
                node.launch();
            }
            for (KafkaNode node : nodes) {
                node.awaitStarted(180);
            }
            String bootstrap = nodes.stream().map(node -> "127.0.0.1:" + node.port()).collect(Collectors.joining(","));
            Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
            KafkaCluster cluster = new KafkaCluster(netns, bridge, nodes, admin);
            cluster.createInternalTopics();
            return cluster;
        } catch (Exception | AssertionError e) {
            for (KafkaNode node : nodes) {
                node.stop();
            }
            if (bridge != null) {
                bridge.close();
            }
            netns.close();
            throw e;
        }
    }

    /** What every node shares: roles, the static quorum and a production cluster's replication. */
    private static Properties commonConfig(List<KafkaNode> nodes) {
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("controller.quorum.voters", nodes.stream()
                .map(node -> node.id() + "@127.0.0.1:" + node.controllerPort()).collect(Collectors.joining(",")));
        p.setProperty("controller.listener.names", "CONTROLLER");
        p.setProperty("inter.broker.listener.name", "PLAINTEXT");
        p.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.setProperty("default.replication.factor", "3");
        p.setProperty("min.insync.replicas", "2");
        p.setProperty("offsets.topic.replication.factor", "3");
        p.setProperty("transaction.state.log.replication.factor", "3");
        p.setProperty("transaction.state.log.min.isr", "2");
        p.setProperty("group.initial.rebalance.delay.ms", "0");
        return p;
    }

    /**
     * Kafka creates {@code __consumer_offsets} and {@code __transaction_state} when a client first
     * asks for a coordinator: ask now, so that the tests find them (and their leaders) in place.
     */
    private void createInternalTopics() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            try {
                // "not found" is the answer of a coordinator, so its topic exists
                try {
                    admin.describeConsumerGroups(List.of("snowstamp-cluster-probe")).all().get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof GroupIdNotFoundException)) {
                        throw e;
                    }
                }
                try {
                    admin.describeTransactions(List.of("snowstamp-cluster-probe")).all().get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TransactionalIdNotFoundException)) {
                        throw e;
                    }
                }
                break;
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(500);
            }
        }
        awaitFullIsr(Duration.ofSeconds(120));
    }

    public Netns netns() {
        return netns;
    }

    /** {@code 127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3}: valid inside the namespace and in this JVM. */
    public String bootstrapServers() {
        return nodes.stream().map(node -> "127.0.0.1:" + node.port()).collect(Collectors.joining(","));
    }

    /** An Admin client of this JVM on the cluster (do not close it). */
    public Admin admin() {
        return admin;
    }

    public List<KafkaNode> nodes() {
        return List.copyOf(nodes);
    }

    /** Node {@code id} (1..3). */
    public KafkaNode node(int id) {
        return nodes.get(id - 1);
    }

    /** The client ports of every node. */
    public List<Integer> ports() {
        return nodes.stream().map(KafkaNode::port).toList();
    }

    private TopicDescription describe(String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).get(topic);
    }

    private TopicPartitionInfo partition(String topic, int partition) throws Exception {
        return describe(topic).partitions().get(partition);
    }

    /** The node that leads {@code topic}-{@code partition} now, as the controller's metadata says. */
    public KafkaNode leaderOf(String topic, int partition) throws Exception {
        Node leader = partition(topic, partition).leader();
        if (leader == null || leader.isEmpty()) {
            throw new IllegalStateException(topic + "-" + partition + " has no leader");
        }
        return node(leader.id());
    }

    /** The first replica of {@code topic}-{@code partition}: where {@link #electPreferredLeaders} puts its leader. */
    public KafkaNode preferredLeaderOf(String topic, int partition) throws Exception {
        return node(partition(topic, partition).replicas().get(0).id());
    }

    /** The node that is the active controller now (the leader of the KRaft quorum). */
    public KafkaNode activeController() throws Exception {
        return node(admin.describeMetadataQuorum().quorumInfo().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).leaderId());
    }

    /**
     * Settings for a client of this JVM that watches the cluster (a test's observer): metadata at most a
     * second old and requests given up after 3 s, so that it follows a leader moved away from a frozen
     * node within seconds of the election instead of waiting for its own request to the frozen node to
     * time out (30 s): what it sees is the cluster's stall, not its own.
     */
    public static Map<String, String> observerSettings() {
        return Map.of("metadata.max.age.ms", "1000", "request.timeout.ms", "3000");
    }

    /** The {@code __consumer_offsets} partition that holds {@code groupId}: its leader coordinates the group. */
    public static int offsetsPartition(String groupId) {
        return Utils.abs(groupId.hashCode()) % OFFSETS_PARTITIONS;
    }

    /** The node that coordinates consumer group {@code groupId} now (the Admin API's answer). */
    public KafkaNode groupCoordinator(String groupId) throws Exception {
        return node(admin.describeConsumerGroups(List.of(groupId)).describedGroups().get(groupId)
                .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).coordinator().id());
    }

    /** The node whose {@code __consumer_offsets} partition for {@code groupId} is preferred: its coordinator once leaders are back in place. */
    public KafkaNode preferredGroupCoordinator(String groupId) throws Exception {
        return preferredLeaderOf("__consumer_offsets", offsetsPartition(groupId));
    }

    /**
     * The transactional ids that begin with {@code prefix} (Kafka Streams names them
     * {@code <application.id>-<process id>-<thread>}) and the node coordinating each now.
     */
    public Map<String, KafkaNode> transactionCoordinators(String prefix) throws Exception {
        Collection<TransactionListing> listings = listTransactions();
        List<String> ids = listings.stream().map(TransactionListing::transactionalId).filter(id -> id.startsWith(prefix)).sorted().toList();
        Map<String, KafkaNode> coordinators = new LinkedHashMap<>();
        if (!ids.isEmpty()) {
            var descriptions = admin.describeTransactions(ids).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            for (String id : ids) {
                coordinators.put(id, node(descriptions.get(id).coordinatorId()));
            }
        }
        return coordinators;
    }

    /**
     * Every transaction the brokers know. The Admin client asks every broker and refuses an answer from
     * a broker it did not ask ({@code IllegalArgumentException: Unexpected key set}) when the broker
     * list changed meanwhile, as it does while a node restarts: asked again (bounded).
     */
    private Collection<TransactionListing> listTransactions() throws Exception {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            try {
                return admin.listTransactions().all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(500);
            }
        }
    }

    /**
     * Creates a topic whose partition {@code p} has the replicas {@code replicas.get(p)} in that
     * order (the first is its leader, and its preferred leader), and waits until every replica is in sync.
     */
    public void createTopic(String name, List<List<Integer>> replicas, Map<String, String> configs) throws Exception {
        Map<Integer, List<Integer>> assignment = new TreeMap<>();
        for (int p = 0; p < replicas.size(); p++) {
            assignment.put(p, replicas.get(p));
        }
        admin.createTopics(List.of(new NewTopic(name, assignment).configs(configs))).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        awaitFullIsr(List.of(name), Duration.ofSeconds(60));
    }

    /**
     * Reorders the replicas of every partition {@code p} of {@code topic} to the order of
     * {@code order.apply(p)} (the first of it that holds a replica becomes the preferred leader),
     * keeping the replica set, and elects the preferred leaders: for topics a test did not create
     * itself, such as a stamper's changelog.
     */
    public void reorderReplicas(String topic, IntFunction<List<Integer>> order) throws Exception {
        Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
        for (TopicPartitionInfo info : describe(topic).partitions()) {
            List<Integer> now = info.replicas().stream().map(Node::id).toList();
            List<Integer> wanted = new ArrayList<>(order.apply(info.partition()).stream().filter(now::contains).toList());
            now.stream().filter(id -> !wanted.contains(id)).forEach(wanted::add);
            if (!wanted.equals(now)) {
                moves.put(new TopicPartition(topic, info.partition()), Optional.of(new NewPartitionReassignment(wanted)));
            }
        }
        if (!moves.isEmpty()) {
            admin.alterPartitionReassignments(moves).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!admin.listPartitionReassignments(moves.keySet()).reassignments().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).isEmpty()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the replicas of " + topic + " were not reordered within " + TIMEOUT);
                }
                Thread.sleep(200);
            }
        }
        electPreferredLeaders();
    }

    /**
     * Moves the leadership of every partition back to its preferred replica (where it was created),
     * as Kafka's own leader rebalancing does every 5 minutes: after a node comes back, the layout a
     * test chose is restored at once. Waits until every partition is led by its preferred replica.
     */
    public void electPreferredLeaders() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            try {
                var results = admin.electLeaders(ElectionType.PREFERRED, null).partitions().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                boolean done = results.values().stream().allMatch(error -> error.isEmpty() || error.get() instanceof ElectionNotNeededException);
                if (done && misplacedLeaders().isEmpty()) {
                    return;
                }
            } catch (ExecutionException e) {
                // a node still coming back: try again
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("partitions not led by their preferred replica: " + misplacedLeaders());
            }
            Thread.sleep(500);
        }
    }

    private List<String> misplacedLeaders() throws Exception {
        List<String> misplaced = new ArrayList<>();
        for (TopicDescription topic : allTopics()) {
            for (TopicPartitionInfo info : topic.partitions()) {
                if (info.leader() == null || info.leader().id() != info.replicas().get(0).id()) {
                    misplaced.add(topic.name() + "-" + info.partition());
                }
            }
        }
        return misplaced;
    }

    private Collection<TopicDescription> allTopics() throws Exception {
        Set<String> names = admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
                .names().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        return admin.describeTopics(names).allTopicNames().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).values();
    }

    /**
     * Cuts {@code node} off from the controller quorum, both ways, until the rule is closed: its packets to the other
     * nodes' controller ports are dropped, and theirs to its controller port; their client ports stay open. It hears
     * nothing from the controller, which fences it after {@code broker.session.timeout.ms} (9 s) and moves its
     * leaderships; its followers, which still reach it, learn that and fetch from the new leaders instead, so from then
     * on it acknowledges nothing more (it cannot shrink its in-sync set without the controller). The node itself keeps
     * its old metadata and answers clients as before: until the move, as the leader it still is.
     */
    public Netns.Rule cutFromControllers(KafkaNode node) throws Exception {
        Map<Integer, List<Integer>> drops = new LinkedHashMap<>();
        List<Integer> controllerPorts = new ArrayList<>();
        for (KafkaNode other : nodes) {
            if (other != node) {
                controllerPorts.add(other.controllerPort());
                drops.put(other.uid(), List.of(node.controllerPort()));
            }
        }
        drops.put(node.uid(), controllerPorts);
        return netns.dropOwnPackets(drops);
    }

    /** Waits until every replica of every topic is in sync (a node that came back has caught up). */
    public void awaitFullIsr(Duration timeout) throws Exception {
        awaitFullIsr(null, timeout);
    }

    private void awaitFullIsr(Collection<String> topics, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<String> lagging = List.of();
        while (System.nanoTime() < deadline) {
            try {
                Collection<TopicDescription> described = topics == null ? allTopics()
                        : admin.describeTopics(topics).allTopicNames().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).values();
                lagging = described.stream().flatMap(topic -> topic.partitions().stream()
                        .filter(info -> info.isr().size() < info.replicas().size())
                        .map(info -> topic.name() + "-" + info.partition())).toList();
                if (lagging.isEmpty()) {
                    return;
                }
            } catch (ExecutionException e) {
                lagging = List.of(e.getCause().toString());
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException("replicas not in sync after " + timeout.toSeconds() + " s: "
                + lagging.subList(0, Math.min(10, lagging.size())) + (lagging.size() > 10 ? " and " + (lagging.size() - 10) + " more" : ""));
    }

    /** Stops every node, the bridge and deletes the namespace. */
    @Override
    public void close() throws Exception {
        admin.close(Duration.ofSeconds(5));
        for (KafkaNode node : nodes) {
            node.stop();
        }
        bridge.close();
        netns.close();
    }
}
