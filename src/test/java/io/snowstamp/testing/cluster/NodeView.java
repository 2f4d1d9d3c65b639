package io.snowstamp.testing.cluster;

import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.RequestHeader;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;

/**
 * What one node itself says about a partition: the leader and leader epoch in its own metadata, and, when it names
 * itself, the committed end it reports as that leader ({@code read_committed} {@code ListOffsets}, what a stamper's
 * lease round asks). Both are asked on one connection to that node's port and nowhere else.
 *
 * <p>An Admin client bootstrapped at one node is not enough for this: it learns the other nodes from that node's
 * metadata and sends its next request (a {@code describeTopics}, a {@code listOffsets}) to whichever it finds least
 * loaded, so that a node cut off from the others, still answering from its old metadata, would be asked only by chance.
 *
 * @param node         the node asked
 * @param leader       the leader in its metadata (-1: none)
 * @param leaderEpoch  that leader's epoch in its metadata
 * @param committedEnd the committed end it reports as leader; -1 when it does not name itself or refuses ({@code error})
 * @param error        its error for the partition ({@code NONE} when it answered)
 */
public record NodeView(int node, int leader, int leaderEpoch, long committedEnd, Errors error) {
    private static final int TIMEOUT_MILLIS = 5_000;

    /** Asks {@code node} (through this JVM's bridge to its port) about {@code partition}. */
    public static NodeView ask(KafkaNode node, TopicPartition partition) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", node.port()), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            MetadataResponse metadata = (MetadataResponse) exchange(out, in, ApiKeys.METADATA,
                    new MetadataRequest.Builder(List.of(partition.topic()), false), 1);
            MetadataResponseData.MetadataResponseTopic topic = metadata.data().topics().find(partition.topic());
            MetadataResponseData.MetadataResponsePartition info = topic == null ? null : topic.partitions().stream()
                    .filter(p -> p.partitionIndex() == partition.partition()).findFirst().orElse(null);
            if (info == null || info.errorCode() != Errors.NONE.code()) {
                Errors error = info != null ? Errors.forCode(info.errorCode()) : topic != null ? Errors.forCode(topic.errorCode())
                        : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                return new NodeView(node.id(), -1, -1, -1, error);
            }
            if (info.leaderId() != node.id()) {
                return new NodeView(node.id(), info.leaderId(), info.leaderEpoch(), -1, Errors.NONE);
            }
            ListOffsetsRequest.Builder list = ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_COMMITTED)
                    .setTargetTimes(List.of(new ListOffsetsRequestData.ListOffsetsTopic().setName(partition.topic())
                            .setPartitions(List.of(new ListOffsetsRequestData.ListOffsetsPartition()
                                    .setPartitionIndex(partition.partition()).setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP)))));
            ListOffsetsResponse offsets = (ListOffsetsResponse) exchange(out, in, ApiKeys.LIST_OFFSETS, list, 2);
            ListOffsetsResponseData.ListOffsetsPartitionResponse answer = offsets.data().topics().get(0).partitions().get(0);
            Errors error = Errors.forCode(answer.errorCode());
            return new NodeView(node.id(), info.leaderId(), info.leaderEpoch(), error == Errors.NONE ? answer.offset() : -1, error);
        }
    }

    /** One request of this build's newest version, and its response (Kafka's framing: a 4-byte size, then header and body). */
    private static AbstractResponse exchange(DataOutputStream out, DataInputStream in, ApiKeys api,
                                             AbstractRequest.Builder<?> builder, int correlationId) throws IOException {
        short version = api.latestVersion();
        RequestHeader header = new RequestHeader(api, version, "snowstamp-test-node-view", correlationId);
        ByteBuffer request = builder.build(version).serializeWithHeader(header);
        out.writeInt(request.remaining());
        byte[] bytes = new byte[request.remaining()];
        request.get(bytes);
        out.write(bytes);
        out.flush();
        byte[] response = new byte[in.readInt()];
        in.readFully(response);
        return AbstractResponse.parseResponse(ByteBuffer.wrap(response), header);
    }

    /** True when the node names itself leader and reports an end. */
    public boolean leadsItself() {
        return leader == node && committedEnd >= 0;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "node %d says: leader %d (epoch %d)%s", node, leader, leaderEpoch,
                committedEnd >= 0 ? ", committed end " + committedEnd : error != Errors.NONE ? ", " + error : "");
    }
}
