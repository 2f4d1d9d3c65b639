package io.snowstamp.embedded;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class BrokerLogTest {
    private static final LoggerContext CONTEXT = (LoggerContext) LoggerFactory.getILoggerFactory();
    private static final String SENDER = "org.apache.kafka.clients.producer.internals.Sender";

    @TempDir
    Path dir;

    private static LoggingEvent event(String logger, Level level, String message, Throwable thrown) {
        Logger log = CONTEXT.getLogger(logger);
        return new LoggingEvent(Logger.class.getName(), log, level, message, thrown, null);
    }

    @Test
    void shouldKeepTheTransactionsV2StartUpRejectionsAndTheirRetriesOffTheConsole() {
        OutOfOrderSequenceException rejection = new OutOfOrderSequenceException("Invalid sequence number for producer 0 at offset 2 in"
                + " partition events.stamped-1: 2 (incoming seq. number). Expected sequence 0 for transactions v2 idempotent producer"
                + " with no existing state");

        assertThat(BrokerLog.RealFailures.isRealFailure(event("kafka.server.ReplicaManager", Level.ERROR,
                "[ReplicaManager broker=1] Error processing append operation on partition x:events.stamped-1", rejection))).isFalse();
        // the batches behind a rejected one, once the broker holds state for the producer
        assertThat(BrokerLog.RealFailures.isRealFailure(event("kafka.server.ReplicaManager", Level.ERROR,
                "[ReplicaManager broker=1] Error processing append operation on partition x:events.stamped-2",
                new OutOfOrderSequenceException("Out of order sequence number for producer 0 at offset 9 in partition events.stamped-2:"
                        + " 3 (incoming seq. number), 1 (current end sequence number)")))).isFalse();
        // a restart's start-up race: the node's registration reached its controller a moment before it became active
        assertThat(BrokerLog.RealFailures.isRealFailure(event("kafka.server.ControllerApis", Level.ERROR,
                "[ControllerApis nodeId=1] Unexpected error handling request RequestHeader(apiKey=CONTROLLER_REGISTRATION, apiVersion=0)",
                new java.util.concurrent.CompletionException(new NotControllerException("The active controller appears to be node 1."))))).isFalse();
        assertThat(BrokerLog.RealFailures.isRealFailure(event("org.apache.kafka.controller.EventPerformanceMonitor", Level.ERROR,
                "[QuorumController id=1] Exceptionally slow controller event handleCommit[baseOffset=0] took 3598 ms.", null))).isFalse();
        for (String error : new String[] {"CONCURRENT_TRANSACTIONS", "OUT_OF_ORDER_SEQUENCE_NUMBER"}) {
            assertThat(BrokerLog.RealFailures.isRealFailure(event(SENDER, Level.WARN, "[Producer clientId=p] Got error produce response"
                    + " with correlation id 19 on topic-partition events.stamped-0, retrying (2147483646 attempts left). Error: " + error,
                    null))).as(error).isFalse();
        }
    }

    @Test
    void shouldPassEveryOtherBrokerErrorAndProducerWarningToTheConsole() {
        assertThat(BrokerLog.RealFailures.isRealFailure(event("kafka.server.ReplicaManager", Level.ERROR,
                "Error processing append operation", new IllegalStateException("log directory failed")))).isTrue();
        assertThat(BrokerLog.RealFailures.isRealFailure(event("kafka.log.LogManager", Level.ERROR, "disk full", null))).isTrue();
        assertThat(BrokerLog.RealFailures.isRealFailure(event(SENDER, Level.WARN, "Got error produce response with correlation id 3"
                + " on topic-partition t-0, retrying (5 attempts left). Error: NOT_ENOUGH_REPLICAS", null))).isTrue();
        assertThat(BrokerLog.RealFailures.isRealFailure(event(SENDER, Level.ERROR, "Uncaught error in kafka producer I/O thread", null)))
                .isTrue();
        assertThat(BrokerLog.RealFailures.isRealFailure(event("kafka.server.BrokerServer", Level.WARN, "chatter", null))).isFalse();
        assertThat(BrokerLog.RealFailures.isRealFailure(event("kafka.server.BrokerServer", Level.INFO, "started", null))).isFalse();
    }

    @Test
    void shouldWriteTheBrokerLogToTheDataDirectoryAndGiveTheLoggersBackOnClose() throws Exception {
        Logger broker = CONTEXT.getLogger("kafka");
        Level before = broker.getLevel();
        boolean additive = broker.isAdditive();

        try (BrokerLog log = BrokerLog.redirect(dir)) {
            assertThat(log.file()).isEqualTo(dir.toAbsolutePath().resolve("broker.log"));
            LoggerFactory.getLogger("kafka.server.KafkaRaftServer").info("a broker line");
            assertThat(broker.isAdditive()).isFalse();
        }

        assertThat(Files.readString(dir.resolve("broker.log"))).contains("INFO  [", "kafka.server.KafkaRaftServer - a broker line");
        assertThat(broker.getLevel()).isEqualTo(before);
        assertThat(broker.isAdditive()).isEqualTo(additive);
        assertThat(broker.iteratorForAppenders().hasNext()).isFalse();
    }
}
